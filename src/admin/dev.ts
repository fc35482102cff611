// `chatgate dev`: from nothing to a key that sends, for local development. Once the service
// answers, a customer, a chat account and a sandbox key (with the emulator, a live key too) are
// created over the operator API when the ones remembered in DATA_DIR/dev.json no longer exist, and
// the shell lines that use them are printed and written to DATA_DIR/dev.env, which
// `chatgate dev env` prints once they are ready (so `eval "$(chatgate dev env)"` waits for them).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { UsageError } from './cli-args.js';

/** What `chatgate dev` remembers between runs (mode 0600 in the data folder: it holds keys). */
type DevState = {
  adminToken?: string;
  customerId?: string;
  accountId?: string;
  sandboxKey?: string;
  liveKey?: string;
};

export const DEV_USAGE = 'chatgate dev [--emulator] | chatgate dev env [--wait SECONDS]';

export const DEV_HELP = `usage: chatgate dev [--emulator]
  starts the service (API and workers; with --emulator the provider emulator too, on EMULATOR_PORT,
  4010, with the service pointed at it), waits until it is ready, then creates a customer (plan pro),
  an OFFICIAL chat account and a sandbox key when none exist yet (remembered in DATA_DIR/dev.json, so
  later runs reuse them; with --emulator a live key too), and prints the export lines that use them.
  ADMIN_TOKEN: the environment's or .env's, else one made up once and kept in DATA_DIR/dev.json.

usage: chatgate dev env [--wait SECONDS]
  prints those export lines once a running \`chatgate dev\` has them (waits up to 120 s), so that
    npx tsx src/cli.ts dev &
    eval "$(npx tsx src/cli.ts dev env)"
  sets CHATGATE_URL, ADMIN_TOKEN, CHATGATE_CUSTOMER_ID, CHATGATE_ACCOUNT_ID and CHATGATE_API_KEY,
  which the customer commands use:
    npx tsx src/cli.ts send --to +15551230000 --text hi
    npx tsx src/cli.ts listen --forward-to http://localhost:8080/hook`;

const stateFile = (dataDir: string) => path.join(dataDir, 'dev.json');
export const devEnvFile = (dataDir: string) => path.join(dataDir, 'dev.env');

function readState(dataDir: string): DevState {
  try {
    return JSON.parse(fs.readFileSync(stateFile(dataDir), 'utf8')) as DevState;
  } catch {
    return {};
  }
}

function writePrivate(file: string, text: string) {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, text, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

/** The operator token `chatgate dev` runs the service with: the configured one, else the remembered one, else a new one. */
export function devAdminToken(dataDir: string, configured: string | undefined): string {
  if (configured) return configured;
  const state = readState(dataDir);
  if (state.adminToken) return state.adminToken;
  const token = crypto.randomBytes(24).toString('hex');
  writePrivate(stateFile(dataDir), JSON.stringify({ ...state, adminToken: token }, null, 2));
  return token;
}

/** Forget the export lines of an earlier run (called before the service starts). */
export function clearDevEnv(dataDir: string): void {
  fs.rmSync(devEnvFile(dataDir), { force: true });
}

type Answer = { status: number; body: Record<string, unknown> };

/**
 * Creates what is missing (customer, account, keys) over the operator API of the running service at
 * `baseUrl`, remembers it, writes DATA_DIR/dev.env and returns its export lines.
 */
export async function devSetup(opts: {
  baseUrl: string;
  adminToken: string;
  dataDir: string;
  /** With the emulator: a live key too. */
  live: boolean;
}): Promise<string> {
  const { baseUrl, adminToken, dataDir } = opts;
  const operator = async (method: string, p: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${baseUrl}${p}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const must = (a: Answer, what: string) => {
    if (a.status >= 300) throw new Error(`chatgate dev: ${what} was refused: ${a.status} ${JSON.stringify(a.body)}`);
    return a.body;
  };
  const keyWorks = async (key: string | undefined) =>
    key !== undefined && (await fetch(`${baseUrl}/chat-accounts`, { headers: { 'x-api-key': key } })).status === 200;

  const state = { ...readState(dataDir), adminToken };
  if (!state.customerId || (await operator('GET', `/admin/customers/${state.customerId}`)).status !== 200) {
    const customer = must(
      await operator('POST', '/admin/customers', { name: 'Dev', plan: 'pro', defaultCountry: 'US' }),
      'creating the customer',
    );
    Object.assign(state, { customerId: customer.id, accountId: undefined, sandboxKey: undefined, liveKey: undefined });
  }
  const accounts = must(
    await operator('GET', `/admin/customers/${state.customerId}/chat-accounts`),
    'listing the accounts',
  ).chatAccounts as { id: string }[];
  if (!state.accountId || !accounts.some((a) => a.id === state.accountId)) {
    const account = must(
      await operator('POST', `/admin/customers/${state.customerId}/chat-accounts`, {
        type: 'OFFICIAL',
        phoneNumber: '+15550100200',
        displayName: 'Dev',
        official: { phoneNumberId: 'dev-phone-number', wabaId: 'dev-waba', accessToken: 'dev-access-token' },
      }),
      'linking the chat account',
    );
    state.accountId = account.id as string;
  }
  if (!(await keyWorks(state.sandboxKey)))
    state.sandboxKey = must(
      await operator('POST', `/admin/customers/${state.customerId}/api-keys`, { sandbox: true, name: 'dev sandbox' }),
      'creating the sandbox key',
    ).key as string;
  if (opts.live && !(await keyWorks(state.liveKey)))
    state.liveKey = must(
      await operator('POST', `/admin/customers/${state.customerId}/api-keys`, { name: 'dev live' }),
      'creating the live key',
    ).key as string;
  writePrivate(stateFile(dataDir), JSON.stringify(state, null, 2));

  const lines = [
    `export CHATGATE_URL=${baseUrl}`,
    `export ADMIN_TOKEN=${adminToken}`,
    `export CHATGATE_CUSTOMER_ID=${state.customerId}`,
    `export CHATGATE_ACCOUNT_ID=${state.accountId}`,
    `export CHATGATE_API_KEY=${state.sandboxKey}`,
    ...(opts.live && state.liveKey ? [`export CHATGATE_LIVE_API_KEY=${state.liveKey}`] : []),
  ].join('\n');
  writePrivate(devEnvFile(dataDir), `${lines}\n`);
  return lines;
}

/** `chatgate dev env`: the export lines, once a running `chatgate dev` has written them and its service answers. */
export async function devEnv(dataDir: string, waitSeconds: number): Promise<string> {
  const deadline = Date.now() + waitSeconds * 1000;
  for (;;) {
    const text = fs.existsSync(devEnvFile(dataDir)) ? fs.readFileSync(devEnvFile(dataDir), 'utf8') : null;
    const url = text ? /^export CHATGATE_URL=(\S+)$/m.exec(text)?.[1] : undefined;
    if (text && url) {
      const healthy = await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (healthy) return text.trimEnd();
    }
    if (Date.now() > deadline)
      throw new UsageError(
        `chatgate dev env: no running \`chatgate dev\` answered within ${waitSeconds} s (start it first: npx tsx src/cli.ts dev &)`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}
