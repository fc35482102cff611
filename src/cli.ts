#!/usr/bin/env node
// chatgate: serve [--role all|api|worker] | migrate | emulator | admin ... (settings from config.ts, which reads the environment)
import { parseArgs } from 'node:util';

import { runAdminCli } from './admin/admin-cli.js';
import { createApp, createLogger, type Role } from './app.js';
import {
  ConfigError,
  type Env,
  loadAdminCliConfig,
  loadConfig,
  loadEmulatorConfig,
  readEnvironment,
} from './config.js';
import { DataDirLockedError } from './db/data-dir.js';
import { migrate } from './db/migrate.js';
import { openDb } from './db/open-db.js';
import { createEmulator } from './emulator/emulator-server.js';
import { EncryptionKeyError } from './secrets/key-check.js';

const USAGE = `usage: chatgate <command>
  serve [--role all|api|worker]   run the HTTP API and/or the workers (default all)
  migrate                         apply database migrations and exit
  emulator                        run the provider emulator (EMULATOR_PORT, default 4010)
  admin ...                       operator commands (chatgate admin --help)`;

async function serve(args: string[], env: Env): Promise<void> {
  const { values } = parseArgs({ args, options: { role: { type: 'string', default: 'all' } }, strict: true });
  const role = values.role as Role;
  if (!['all', 'api', 'worker'].includes(role))
    throw new ConfigError([`--role must be all, api or worker (got "${role}")`]);
  const config = loadConfig(env);
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
    app.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await app.start();
}

async function main(argv: string[]): Promise<number> {
  const env = readEnvironment();
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      await serve(rest, env);
      return -1; // keep running
    case 'migrate': {
      const config = loadConfig(env);
      const log = createLogger(config);
      const db = await openDb(config, { log });
      const applied = await migrate(db);
      log.info({ applied }, 'migrations up to date');
      await db.close();
      return 0;
    }
    case 'emulator': {
      const config = loadEmulatorConfig(env);
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
    case 'admin':
      return runAdminCli(rest, loadAdminCliConfig(env));
    default:
      console.log(USAGE);
      return command === undefined || command === '--help' ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    // Refusals an operator acts on are one clear line; anything else shows its stack.
    if (err instanceof ConfigError || err instanceof DataDirLockedError || err instanceof EncryptionKeyError)
      console.error(err.message);
    else console.error(err);
    process.exit(1);
  },
);
