#!/usr/bin/env node
// chatgate: serve [--role all|api|worker] | migrate | emulator | admin ... | send | messages | listen | help | --version (settings from config.ts, which reads the environment)
// The service, the database drivers and the emulator are imported by the commands that run them: help,
// --version, a bad command line and `admin` (an HTTP client) answer without loading them (~1 s each).
import fs from 'node:fs';
import path from 'node:path';

import { adminHelp, runAdminCli } from './admin/admin-cli.js';
import { CommandError } from './admin/api-call.js';
import { chatgateVersion, parseCommandArgs, UsageError, wantsHelp } from './admin/cli-args.js';
import { CUSTOMER_HELP, CUSTOMER_USAGE, runCustomerCli } from './admin/customer-cli.js';
import { clearDevEnv, DEV_HELP, DEV_USAGE, devAdminToken, devEnv, devEnvFile, devSetup } from './admin/dev.js';
import { dataDirOperatorToken, firstStartHelp, laterStartHelp, readOperatorToken } from './admin/operator-token.js';
import type { Role } from './app.js';
import {
  type Config,
  ConfigError,
  type Env,
  loadAdminCliConfig,
  loadConfig,
  loadEmulatorConfig,
  readEnvironment,
} from './config.js';
import { DataDirLockedError } from './db/data-dir.js';
import { EncryptionKeyError } from './secrets/key-check.js';

const HELP: Record<string, string> = {
  serve: `usage: chatgate serve [--role all|api|worker]
  runs the HTTP API and the workers (all, the default), only the API, or only the workers;
  applies pending migrations first. Settings come from the environment or .env (docs/configuration.md).
  With the embedded database and no ADMIN_TOKEN, the first start makes an operator token, keeps it
  in DATA_DIR/admin-token (0600) and prints it once; later starts use it and print where it is.

examples:
  chatgate serve
  chatgate serve --role api      (and chatgate serve --role worker in another process)`,
  migrate: `usage: chatgate migrate
  applies the database's pending migrations and exits (DATABASE_URL, or the embedded database in DATA_DIR).

examples:
  chatgate migrate
  DATABASE_URL=postgres://chatgate@db:5432/chatgate chatgate migrate`,
  emulator: `usage: chatgate emulator
  runs the provider emulator, a local stand-in for the provider's Cloud API (docs/emulator.md):
  EMULATOR_PORT (4010), EMULATOR_HOST, EMULATOR_CALLBACK_URL, PROVIDER_APP_SECRET, EMULATOR_LATENCY_MS.

examples:
  chatgate emulator
  EMULATOR_PORT=4020 EMULATOR_LATENCY_MS=200 chatgate emulator`,
  admin: adminHelp([]),
  dev: DEV_HELP,
  send: CUSTOMER_HELP.send!,
  listen: CUSTOMER_HELP.listen!,
  messages: `${CUSTOMER_HELP['messages get']!.split('\n\nexamples')[0]}\n\n${CUSTOMER_HELP['messages list']}`,
};

const USAGE = `usage: chatgate <command> [options]
  serve [--role all|api|worker]   run the HTTP API and/or the workers (default all)
  migrate                         apply database migrations and exit
  emulator                        run the provider emulator (EMULATOR_PORT, default 4010)
  admin ...                       operator commands (chatgate admin --help)
${CUSTOMER_USAGE}
  dev [--emulator]                local development: the service, a customer, an account, a sandbox key
  dev env                         the export lines of a running \`chatgate dev\`, once it is ready
  help [COMMAND]                  this text, or a command's help
  --version                       the version

chatgate <command> --help prints a command's help and does nothing else.`;

async function serve(args: string[], env: Env): Promise<void> {
  const { values } = parseCommandArgs(
    args,
    { role: { type: 'string', default: 'all' } },
    'chatgate serve',
    'chatgate serve [--role all|api|worker]',
  );
  const role = values.role as Role;
  if (!['all', 'api', 'worker'].includes(role))
    throw new ConfigError([`--role must be all, api or worker (got "${role}")`]);
  const config = loadConfig(env);
  // Embedded, no ADMIN_TOKEN: the data folder's own token, made on the first start (decision 0065).
  const kept =
    role !== 'worker' && config.adminToken === null && config.databaseUrl === null
      ? dataDirOperatorToken(config.dataDir)
      : null;
  const address = await startServing(kept ? { ...config, adminToken: kept.token } : config, role);
  if (kept && address)
    console.error(kept.created ? firstStartHelp(address, kept.file, kept.token) : laterStartHelp(address, kept.file));
}

/** Starts the service; SIGTERM/SIGINT stop it (and `alsoStop`, e.g. the dev emulator) and exit. */
async function startServing(config: Config, role: Role, alsoStop?: () => Promise<void>) {
  const { createApp } = await import('./app.js');
  const app = await createApp(config, { role });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    Promise.all([app.stop(), alsoStop?.()]).then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  return app.start();
}

/** `chatgate dev [--emulator]` and `chatgate dev env`. */
async function dev(args: string[], env: Env): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    { emulator: { type: 'boolean' }, wait: { type: 'string' } },
    'chatgate dev',
    DEV_USAGE,
    true,
  );
  const dataDir = path.resolve(env.DATA_DIR ?? './data');
  if (positionals[0] === 'env' && positionals.length === 1) {
    const wait = Number(values.wait ?? '120');
    if (!Number.isFinite(wait) || wait < 0)
      throw new UsageError(`chatgate dev env: --wait must be a number of seconds (usage: ${DEV_USAGE})`);
    console.log(await devEnv(dataDir, wait));
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`chatgate dev: unexpected argument ${positionals[0]} (usage: ${DEV_USAGE})`);
  clearDevEnv(dataDir);
  const devVars: Env = { ADMIN_TOKEN: devAdminToken(dataDir, env.ADMIN_TOKEN) };
  let stopEmulator: (() => Promise<void>) | undefined;
  if (values.emulator) {
    const port = env.PORT ?? '3000';
    const host = env.HOST ?? '127.0.0.1';
    const secrets = { PROVIDER_APP_SECRET: env.PROVIDER_APP_SECRET ?? 'dev-app-secret' };
    const emulatorConfig = loadEmulatorConfig({
      ...env,
      ...secrets,
      EMULATOR_CALLBACK_URL: env.EMULATOR_CALLBACK_URL ?? `http://${host}:${port}/provider/webhooks/app`,
    });
    const { createEmulator } = await import('./emulator/emulator-server.js');
    const { app } = createEmulator(emulatorConfig);
    const address = await app.listen({ port: emulatorConfig.port, host: emulatorConfig.host });
    console.error(`chatgate dev: provider emulator at ${address}`);
    stopEmulator = () => app.close();
    Object.assign(devVars, secrets, {
      PROVIDER_BASE_URL: address,
      PROVIDER_VERIFY_TOKEN: env.PROVIDER_VERIFY_TOKEN ?? 'dev-verify-token',
    });
  }
  const config = loadConfig({ ...env, ...devVars });
  const baseUrl = (await startServing(config, 'all', stopEmulator))!;
  const lines = await devSetup({ baseUrl, adminToken: config.adminToken!, dataDir, live: values.emulator === true });
  console.log(lines);
  console.error(
    `chatgate dev: ready. In another shell: eval "$(npx tsx src/cli.ts dev env)"  (also in ${devEnvFile(dataDir)}); Ctrl-C stops.`,
  );
  return -1;
}

/** The help a command line asks for (`help X`, `X --help`), or null when it asks for none. */
function helpAsked(command: string | undefined, rest: string[]): string | null {
  if (command === undefined || command === '--help' || command === '-h') return USAGE;
  if (command === 'help') {
    const [topic, ...more] = rest;
    if (topic === undefined) return USAGE;
    if (topic === 'admin') return adminHelp(more);
    return HELP[topic] ?? null;
  }
  if (command === 'messages' && (rest[0] === 'get' || rest[0] === 'list') && wantsHelp(rest))
    return CUSTOMER_HELP[`messages ${rest[0]}`]!;
  if (command in HELP && wantsHelp(rest)) return command === 'admin' ? adminHelp(rest) : HELP[command]!;
  return null;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v' || command === 'version') {
    console.log(chatgateVersion());
    return 0;
  }
  const help = helpAsked(command, rest);
  if (help !== null) {
    console.log(help);
    return 0;
  }
  const noArgs = (name: string) => parseCommandArgs(rest, {}, `chatgate ${name}`, `chatgate ${name}`);
  switch (command) {
    case 'serve':
      await serve(rest, readEnvironment());
      return -1; // keep running
    case 'migrate': {
      noArgs('migrate');
      const config = loadConfig(readEnvironment());
      const [{ createLogger }, { openDb }, { migrate }] = await Promise.all([
        import('./app.js'),
        import('./db/open-db.js'),
        import('./db/migrate.js'),
      ]);
      const log = createLogger(config);
      const db = await openDb(config, { log });
      const applied = await migrate(db);
      log.info({ applied }, 'migrations up to date');
      await db.close();
      return 0;
    }
    case 'emulator': {
      noArgs('emulator');
      const config = loadEmulatorConfig(readEnvironment());
      const { createEmulator } = await import('./emulator/emulator-server.js');
      const { app } = createEmulator(config);
      const address = await app.listen({ port: config.port, host: config.host });
      console.log(
        JSON.stringify({
          msg: 'provider emulator listening',
          address,
          callbackUrl: config.callbackUrl,
          signing: config.appSecret !== null,
        }),
      );
      const stop = () => void app.close().then(() => process.exit(0));
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      return -1;
    }
    case 'dev':
      return dev(rest, readEnvironment());
    case 'send':
    case 'messages':
    case 'listen': {
      const env = readEnvironment();
      return runCustomerCli(argv, {
        baseUrl: loadAdminCliConfig(env).baseUrl,
        apiKey: env.CHATGATE_API_KEY || undefined,
        readFile: (file) => fs.readFileSync(file, 'utf8'),
      });
    }
    case 'admin': {
      const env = readEnvironment();
      const config = loadAdminCliConfig(env);
      // Embedded, no ADMIN_TOKEN: the token `serve` made in the data folder (decision 0065).
      if (!config.adminToken && !env.DATABASE_URL)
        config.adminToken = readOperatorToken(path.resolve(env.DATA_DIR ?? './data'));
      return runAdminCli(rest, config);
    }
    default:
      throw new UsageError(
        command === 'help'
          ? `chatgate help: unknown command "${rest[0]}" (chatgate help lists the commands)`
          : `chatgate: unknown command "${command}" (chatgate help lists the commands)`,
      );
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof CommandError) {
      console.error(err.message);
      process.exit(err.exitCode);
    }
    if (err instanceof UsageError) {
      console.error(err.message);
      process.exit(2);
    }
    // Refusals an operator acts on are one clear line; anything else shows its stack.
    if (err instanceof ConfigError || err instanceof DataDirLockedError || err instanceof EncryptionKeyError)
      console.error(err.message);
    else console.error(err);
    process.exit(1);
  },
);
