// `chatgate send | messages get | messages list | listen`: the API as a customer uses it, with an API
// key (--api-key or CHATGATE_API_KEY) against --url or CHATGATE_URL. The same HTTP calls as the
// client package (packages/client), made here with fetch: the program is built from src/ alone.
// Failures are one line on stderr with the exit codes of api-call.ts (EXIT).
import crypto from 'node:crypto';

import { apiCall, CommandError, errorLine, EXIT } from './api-call.js';
import { parseCommandArgs, UsageError } from './cli-args.js';
import { listen } from './listen.js';

const CONNECTION = `the key: --api-key KEY or CHATGATE_API_KEY (ak_live_… or ak_test_…);
the service: --url URL or CHATGATE_URL (default http://127.0.0.1:$PORT, PORT default 3000)`;

const EXITS = `exit codes: 0 done, 1 the service refused (the error on one line), 2 a bad command line,
4 the service could not be reached`;

export const CUSTOMER_HELP: Record<string, string> = {
  send: `usage: chatgate send --to +E164 --text TEXT [--account ID] [--external-id ID] [--quiet]
       chatgate send --body JSON|@FILE [--quiet]
  queues a message (POST /messages) and prints the answer (--quiet: only the message id).
  --external-id defaults to a new cli-<uuid> (the idempotency key: the same one again is the same message).
  --body sends a whole request body (any content: template, image, document, reply…), as JSON or from a file.

examples:
  chatgate send --to +15551230000 --text "Your code is 123456"
  chatgate send --to +15551230000 --text hi --external-id order-42 --quiet
  chatgate send --body '{"externalId":"t1","to":{"type":"phone","phoneE164":"+15551230000"},"content":{"type":"template","template":{"name":"hello_world","language":"en_US"}}}'
  chatgate send --body @message.json

${CONNECTION}
${EXITS}`,
  'messages get': `usage: chatgate messages get MESSAGE_ID|EXTERNAL_ID [--json]
  shows one message (GET /messages/{id}): its status, times and error (--json: the answer as JSON).

examples:
  chatgate messages get 0b9f3c9e-7d0c-4a53-9a3e-1b2c3d4e5f60
  chatgate messages get order-42 --json

${CONNECTION}
${EXITS}`,
  'messages list': `usage: chatgate messages list [--status S] [--account ID] [--external-id ID] [--limit N] [--cursor C] [--all] [--json]
  lists messages, newest first (GET /messages): one line each (--json: the answer as JSON; --all: every page).

examples:
  chatgate messages list --limit 5
  chatgate messages list --status failed --all
  chatgate messages list --json | jq '.messages[].id'

${CONNECTION}
${EXITS}`,
  listen: `usage: chatgate listen [--forward-to URL] [--secret whsec_…] [--json]
  prints the key's customer's events as they happen (GET /events/stream), and with --forward-to posts
  each one to URL signed as webhook deliveries are (x-svc-signature, x-svc-event, x-svc-event-id),
  with the signing secret printed at the start (a new whsec_… each run unless --secret).
  A live key gets every event of the customer (plans Basic and Pro), a sandbox key the events of
  sandbox messages (every plan). Reconnects by itself (Last-Event-ID) until Ctrl-C.

examples:
  chatgate listen
  chatgate listen --forward-to http://localhost:8080/webhooks
  CHATGATE_API_KEY=ak_test_… chatgate listen --forward-to http://localhost:8080/hook --secret whsec_dev
  chatgate listen --json | jq .type

${CONNECTION}
${EXITS}`,
};

export const CUSTOMER_USAGE = `  send --to +E164 --text TEXT     send a message with an API key (chatgate send --help)
  messages get|list               read messages with an API key
  listen [--forward-to URL]       watch the key's events live, forwarded signed to a local URL`;

const COMMON = { 'api-key': { type: 'string' }, url: { type: 'string' } } as const;

const OPTIONS = {
  send: {
    ...COMMON,
    to: { type: 'string' },
    text: { type: 'string' },
    account: { type: 'string' },
    'external-id': { type: 'string' },
    body: { type: 'string' },
    quiet: { type: 'boolean', short: 'q' },
  },
  'messages get': { ...COMMON, json: { type: 'boolean' } },
  'messages list': {
    ...COMMON,
    status: { type: 'string' },
    account: { type: 'string' },
    'external-id': { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    all: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  listen: { ...COMMON, 'forward-to': { type: 'string' }, secret: { type: 'string' }, json: { type: 'boolean' } },
} as const;

export type CustomerEnv = { baseUrl: string; apiKey: string | undefined; readFile: (path: string) => string };

/** The command a command line names (`send`, `messages get`…), or null when it is not one of these. */
export function customerCommand(argv: string[]): string | null {
  if (argv[0] === 'send' || argv[0] === 'listen') return argv[0];
  if (argv[0] === 'messages') return argv[1] === 'get' || argv[1] === 'list' ? `messages ${argv[1]}` : 'messages';
  return null;
}

export async function runCustomerCli(argv: string[], env: CustomerEnv): Promise<number> {
  const name = customerCommand(argv);
  if (name === 'messages')
    throw new UsageError(
      `chatgate messages: missing command (get|list); chatgate messages ${argv[1] ? '' : 'get '}--help`,
    );
  const words = name!.split(' ').length;
  const usage = CUSTOMER_HELP[name!]!.split('\n')[0]!.replace(/^usage: /, '');
  const { values: v, positionals } = parseCommandArgs(
    argv.slice(words),
    OPTIONS[name as keyof typeof OPTIONS],
    `chatgate ${name}`,
    usage,
    true,
  ) as unknown as { values: Record<string, string | boolean | undefined>; positionals: string[] };
  const wantId = name === 'messages get';
  if (wantId && positionals.length === 0)
    throw new UsageError(`chatgate ${name}: MESSAGE_ID is missing (usage: ${usage})`);
  if (positionals.length > (wantId ? 1 : 0))
    throw new UsageError(`chatgate ${name}: unexpected argument ${positionals[wantId ? 1 : 0]} (usage: ${usage})`);
  const apiKey = (v['api-key'] as string | undefined) ?? env.apiKey;
  if (!apiKey)
    throw new UsageError(`chatgate ${name}: no API key: pass --api-key KEY or set CHATGATE_API_KEY (usage: ${usage})`);
  const baseUrl = ((v.url as string | undefined) ?? env.baseUrl).replace(/\/+$/, '');
  const auth = { 'x-api-key': apiKey };
  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await apiCall(baseUrl, auth, method, path, body);
    if (!answer.ok) throw new CommandError(errorLine(answer.status, answer.text), EXIT.refused);
    return answer.json as Record<string, unknown>;
  };
  switch (name) {
    case 'send': {
      const answer = await call('POST', '/messages', sendBody(v, env, usage));
      console.log(v.quiet ? String(answer.messageId) : JSON.stringify(answer, null, 2));
      return EXIT.ok;
    }
    case 'messages get': {
      const m = await call('GET', `/messages/${encodeURIComponent(positionals[0]!)}`);
      console.log(v.json ? JSON.stringify(m, null, 2) : messageView(m));
      return EXIT.ok;
    }
    case 'messages list':
      return listMessages(v, call);
    default:
      return listen({
        baseUrl,
        apiKey,
        forwardTo: v['forward-to'] as string | undefined,
        secret: v.secret as string | undefined,
        json: v.json === true,
      });
  }
}

function sendBody(v: Record<string, string | boolean | undefined>, env: CustomerEnv, usage: string): unknown {
  const body = v.body as string | undefined;
  if (body !== undefined) {
    if (v.to !== undefined || v.text !== undefined)
      throw new UsageError(`chatgate send: --body is the whole request: no --to or --text with it (usage: ${usage})`);
    const text = body.startsWith('@') ? readOrFail(env, body.slice(1)) : body;
    try {
      return JSON.parse(text);
    } catch {
      throw new UsageError(`chatgate send: --body is not JSON (usage: ${usage})`);
    }
  }
  if (v.to === undefined || v.text === undefined)
    throw new UsageError(`chatgate send: --to and --text are needed, or --body (usage: ${usage})`);
  return {
    externalId: (v['external-id'] as string | undefined) ?? `cli-${crypto.randomUUID()}`,
    to: { type: 'phone', phoneE164: v.to },
    content: { type: 'text', text: v.text },
    ...(v.account !== undefined ? { chatAccountId: v.account } : {}),
  };
}

function readOrFail(env: CustomerEnv, file: string): string {
  try {
    return env.readFile(file);
  } catch (err) {
    throw new UsageError(`chatgate send: cannot read ${file} (${(err as Error).message})`);
  }
}

type Call = (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>>;

async function listMessages(v: Record<string, string | boolean | undefined>, call: Call): Promise<number> {
  const query = new URLSearchParams();
  for (const [flag, param] of [
    ['status', 'status'],
    ['account', 'chatAccountId'],
    ['external-id', 'externalId'],
    ['limit', 'limit'],
    ['cursor', 'cursor'],
  ] as const)
    if (typeof v[flag] === 'string') query.set(param, v[flag]);
  const messages: Record<string, unknown>[] = [];
  let next: string | null = null;
  do {
    if (next) query.set('cursor', next);
    const page = await call('GET', `/messages${query.size > 0 ? `?${query}` : ''}`);
    messages.push(...(page.messages as Record<string, unknown>[]));
    next = (page.nextCursor as string | null | undefined) ?? null;
  } while (v.all && next);
  if (v.json) console.log(JSON.stringify({ messages, nextCursor: next }, null, 2));
  else {
    for (const m of messages) console.log(messageLine(m));
    if (next) console.error(`(more: --cursor ${next}, or --all)`);
  }
  return EXIT.ok;
}

const recipientOf = (m: Record<string, unknown>) => String(m.recipient ?? m.recipientUserId ?? '-');

function messageLine(m: Record<string, unknown>): string {
  return [m.messageId, m.status, recipientOf(m), m.createdAt, m.externalId].map((x) => String(x ?? '-')).join('  ');
}

function messageView(m: Record<string, unknown>): string {
  const error = m.error as { code?: string; message?: string } | null | undefined;
  const rows: [string, unknown][] = [
    ['messageId', m.messageId],
    ['externalId', m.externalId],
    ['status', m.status],
    ['recipient', recipientOf(m)],
    ['chatAccountId', m.chatAccountId],
    ['sandbox', m.sandbox],
    ['createdAt', m.createdAt],
    ['sentAt', m.sentAt],
    ['deliveredAt', m.deliveredAt],
    ['readAt', m.readAt],
    ['failedAt', m.failedAt],
    ['error', error ? `${error.code}: ${error.message}` : null],
  ];
  return rows.map(([k, val]) => `${k.padEnd(14)}${val === null || val === undefined ? '-' : String(val)}`).join('\n');
}
