// `chatgate admin ...`: the operator API from a terminal. Lists and gets print tables (--json: the
// answer as JSON); other commands print the JSON answer. An error answer is one line on stderr and
// exit 1; the service out of reach exit 4; an account saved unverified exit 3 (api-call.ts, EXIT).
import { parseArgs } from 'node:util';

import { ADMIN_EXAMPLES } from './admin-examples.js';
import { PAGED, VIEWS } from './admin-views.js';
import { errorLine, EXIT } from './api-call.js';
import { parseCommandArgs, UsageError, wantsHelp } from './cli-args.js';

const ACCOUNT_OPTIONS = [
  'status',
  'phone-number-id',
  'waba-id',
  'access-token',
  'app-secret',
  'integration-id',
  'management-token',
  'send-policy',
  'test-recipient',
  'throughput',
  'verified-name',
  'portfolio',
  'messaging-limit',
] as const;

const ACCOUNT_HELP = `account options: --status S --phone-number-id ID --waba-id ID --access-token T --app-secret S
  --integration-id ID --management-token T --send-policy DISABLED|TEST|PRODUCTION|GLOBAL
  --test-recipient +E164 (repeatable) --throughput N --verified-name NAME
  --portfolio ID|none (accounts sharing one messaging limit) --messaging-limit N|unlimited (the portfolio's)`;

type Command = {
  usage: string;
  about: string;
  /** The positional id the command needs, by name (printed when it is missing). */
  id?: string;
  /** The options it takes (besides --help), and what --quiet prints of the answer. */
  options: readonly (keyof typeof OPTIONS)[];
  quiet?: 'id' | 'key';
};

/** Every admin command: its usage line, what it does and the options it accepts. */
const COMMANDS: Record<string, Command> = {
  'customers create': {
    usage: '--name NAME --plan free|starter|basic|pro [--default-country XX] [--quiet]',
    about: 'creates a customer; prints it as JSON (--quiet: only its id)',
    options: ['name', 'plan', 'default-country', 'quiet'],
    quiet: 'id',
  },
  'customers list': {
    usage: '[--search TEXT] [--plan PLAN] [--limit N] [--cursor C] [--all] [--json]',
    about: 'lists customers, newest first (--search: a part of the name, any case; --all: every page)',
    options: ['search', 'plan', 'limit', 'cursor', 'all', 'json'],
  },
  'customers get': {
    usage: 'CUSTOMER_ID [--json]',
    about: 'shows a customer and its usage this month',
    id: 'CUSTOMER_ID',
    options: ['json'],
  },
  'customers update': {
    usage: 'CUSTOMER_ID [--name NAME] [--plan PLAN] [--default-country XX]',
    about: 'changes a customer',
    id: 'CUSTOMER_ID',
    options: ['name', 'plan', 'default-country'],
  },
  'accounts create': {
    usage:
      'CUSTOMER_ID --type OFFICIAL|DIRECT --phone +E164 --display-name NAME [account options] [--no-verify] [--quiet]',
    about:
      "links a chat account; an OFFICIAL account's access token is first checked with the provider (a rejected token is refused; one the provider could not be asked about is saved AUTHENTICATING, never CONNECTED, exit 3; --no-verify skips the check) (--quiet: only its id)",
    id: 'CUSTOMER_ID',
    options: ['type', 'phone', 'display-name', ...ACCOUNT_OPTIONS, 'no-verify', 'quiet'],
    quiet: 'id',
  },
  'accounts update': {
    usage: 'ACCOUNT_ID [account options] [--no-verify]',
    about: 'changes a chat account (a new access token is first checked with the provider; --no-verify skips it)',
    id: 'ACCOUNT_ID',
    options: ['phone', 'display-name', ...ACCOUNT_OPTIONS, 'no-verify'],
  },
  'accounts list': {
    usage: 'CUSTOMER_ID [--limit N] [--cursor C] [--all] [--json]',
    about: "lists a customer's chat accounts",
    id: 'CUSTOMER_ID',
    options: ['limit', 'cursor', 'all', 'json'],
  },
  usage: {
    usage: 'CUSTOMER_ID [--month YYYY-MM] [--json]',
    about: "shows a customer's quota use: plan, limit, used, remaining, resetsAt",
    id: 'CUSTOMER_ID',
    options: ['month', 'json'],
  },
  'keys create': {
    usage:
      'CUSTOMER_ID [--sandbox] [--account ACCOUNT_ID] [--template-access none|read|manage] [--name NAME] [--quiet]',
    about: 'creates an API key and prints it once (--quiet: only the key, ak_…)',
    id: 'CUSTOMER_ID',
    options: ['sandbox', 'account', 'template-access', 'name', 'quiet'],
    quiet: 'key',
  },
  'keys list': {
    usage: 'CUSTOMER_ID [--json]',
    about: "lists a customer's API keys (masked), with when each was last used",
    id: 'CUSTOMER_ID',
    options: ['json'],
  },
  'keys revoke': { usage: 'KEY_ID', about: 'revokes an API key at once', id: 'KEY_ID', options: [] },
  'users create': {
    usage: 'CUSTOMER_ID --email EMAIL [--role owner|viewer] [--quiet]',
    about: 'invites a portal user; prints the one-time invitation link (--quiet: only the user id)',
    id: 'CUSTOMER_ID',
    options: ['email', 'role', 'quiet'],
    quiet: 'id',
  },
  'users list': { usage: 'CUSTOMER_ID', about: "lists a customer's portal users", id: 'CUSTOMER_ID', options: [] },
  'users reset-password': {
    usage: 'USER_ID',
    about: 'ends the password, sessions and two-factor sign-in; prints a new invitation link',
    id: 'USER_ID',
    options: [],
  },
  'users disable': { usage: 'USER_ID', about: 'disables a portal user', id: 'USER_ID', options: [] },
  rekey: {
    usage: '',
    about: "key rotation: re-seals every secret under the service's ENCRYPTION_KEY (docs/security.md)",
    options: [],
  },
};

const usageLine = (name: string) => `chatgate admin ${name} ${COMMANDS[name]!.usage}`;

const USAGE = `usage: chatgate admin <command> [options]   (needs ADMIN_TOKEN, else the embedded service's DATA_DIR/admin-token; CHATGATE_URL defaults to http://127.0.0.1:$PORT)

${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name} ${c.usage}`)
  .join('\n')}

${ACCOUNT_HELP}

lists, gets and usage print tables for people; --json prints the answer as JSON, for scripts.
create commands print the JSON answer; --quiet prints only the new id (keys create: the key).
chatgate admin <command> --help says more about one command.`;

/** The help of one command (`admin keys create --help`), or of a group (`admin keys --help`). */
function helpFor(words: string[]): string {
  const name = words.join(' ');
  const command = COMMANDS[name];
  if (command)
    return [
      `usage: ${usageLine(name)}`,
      `  ${command.about}`,
      ...(command.usage.includes('account options') ? ['', ACCOUNT_HELP] : []),
      '',
      'examples:',
      ...(ADMIN_EXAMPLES[name] ?? []).map((e) => `  ${e}`),
      '',
      "needs ADMIN_TOKEN, else the embedded service's DATA_DIR/admin-token; CHATGATE_URL defaults to http://127.0.0.1:$PORT",
    ].join('\n');
  const group = Object.keys(COMMANDS).filter((n) => words.length > 0 && n.split(' ')[0] === words[0]);
  if (words.length === 1 && group.length > 0)
    return ['usage:', ...group.map((n) => `  ${usageLine(n)}`), '', 'chatgate admin <command> --help says more'].join(
      '\n',
    );
  return USAGE;
}

const OPTIONS = {
  name: { type: 'string' },
  plan: { type: 'string' },
  'default-country': { type: 'string' },
  type: { type: 'string' },
  phone: { type: 'string' },
  'display-name': { type: 'string' },
  status: { type: 'string' },
  'phone-number-id': { type: 'string' },
  'waba-id': { type: 'string' },
  'access-token': { type: 'string' },
  'app-secret': { type: 'string' },
  'integration-id': { type: 'string' },
  'management-token': { type: 'string' },
  'send-policy': { type: 'string' },
  'test-recipient': { type: 'string', multiple: true },
  throughput: { type: 'string' },
  'verified-name': { type: 'string' },
  portfolio: { type: 'string' },
  'messaging-limit': { type: 'string' },
  sandbox: { type: 'boolean' },
  account: { type: 'string' },
  'template-access': { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  search: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  all: { type: 'boolean' },
  month: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  'no-verify': { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function clean<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(o).filter(
      ([, v]) =>
        v !== undefined && !(typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0),
    ),
  ) as Partial<T>;
}

function accountBody(v: Values) {
  const official = clean({
    phoneNumberId: v['phone-number-id'],
    wabaId: v['waba-id'],
    accessToken: v['access-token'],
    appSecret: v['app-secret'],
    integrationId: v['integration-id'],
    managementToken: v['management-token'],
    verifiedName: v['verified-name'],
  });
  return clean({
    type: v.type,
    phoneNumber: v.phone,
    displayName: v['display-name'],
    status: v.status,
    official: Object.keys(official).length > 0 ? official : undefined,
    sendPolicy: v['send-policy'] ? clean({ mode: v['send-policy'], testRecipients: v['test-recipient'] }) : undefined,
    throughputMps: v.throughput !== undefined ? Number(v.throughput) : undefined,
    portfolioId: v.portfolio === undefined ? undefined : v.portfolio === 'none' ? null : v.portfolio,
    messagingLimit:
      v['messaging-limit'] === undefined
        ? undefined
        : v['messaging-limit'] === 'unlimited'
          ? null
          : Number(v['messaging-limit']),
  });
}

/** The admin command a command line names (`keys create`, `usage`), its id and its options. */
function parseCommandLine(argv: string[]) {
  // A first, lenient pass finds the command's words; the strict pass then knows which usage to name.
  const loose = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: false }).positionals;
  // `usage` and `rekey` are one word: usage's id is the second.
  const words = loose[0] === 'usage' || loose[0] === 'rekey' ? [loose[0]] : loose.slice(0, 2);
  const name = words.join(' ');
  const command = COMMANDS[name];
  if (!command) {
    if (words.length === 1 && Object.keys(COMMANDS).some((n) => n.startsWith(`${words[0]} `)))
      throw new UsageError(
        `chatgate admin ${words[0]}: missing command (${Object.keys(COMMANDS)
          .filter((n) => n.startsWith(`${words[0]} `))
          .map((n) => n.split(' ')[1])
          .join('|')}); chatgate admin ${words[0]} --help`,
      );
    throw new UsageError(
      `chatgate admin: unknown command "${name}" (usage: chatgate admin <command> [options]; chatgate admin --help lists them)`,
    );
  }
  const options = Object.fromEntries(command.options.map((o) => [o, OPTIONS[o]])) as Partial<typeof OPTIONS>;
  const { values, positionals } = parseCommandArgs(argv, options, `chatgate admin ${name}`, usageLine(name), true);
  const rest = positionals.slice(words.length);
  if (command.id && rest.length === 0)
    throw new UsageError(`chatgate admin ${name}: ${command.id} is missing (usage: ${usageLine(name)})`);
  if (rest.length > (command.id ? 1 : 0))
    throw new UsageError(
      `chatgate admin ${name}: unexpected argument ${rest[command.id ? 1 : 0]} (usage: ${usageLine(name)})`,
    );
  return { name, command, id: rest[0], v: values as Values };
}

/** `chatgate admin --help` and `chatgate admin <command> --help`: the help, and nothing else. */
export function adminHelp(argv: string[]): string {
  const words = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: false }).positionals;
  return helpFor(words[0] === 'usage' ? ['usage'] : words.slice(0, 2));
}

export async function runAdminCli(
  argv: string[],
  env: { baseUrl: string; adminToken: string | null },
): Promise<number> {
  if (wantsHelp(argv)) {
    console.log(adminHelp(argv));
    return 0;
  }
  if (argv.length === 0) {
    console.error(USAGE);
    return 2;
  }
  const { name, command, id, v } = parseCommandLine(argv);
  if (!env.adminToken) {
    console.error(
      'chatgate admin: ADMIN_TOKEN is not set (the operator token the service was started with; see .env) and DATA_DIR holds no admin-token',
    );
    return 2;
  }
  const [method, path, body] = routeOf(name, id, v);
  const request = async (url: string) =>
    fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${env.adminToken}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
  let res: Response;
  let text: string;
  try {
    res = await request(`${env.baseUrl}${path}`);
    text = await res.text();
    const listField = PAGED[name];
    if (v.all && listField && res.ok) text = JSON.stringify(await followCursors(JSON.parse(text), listField));
  } catch (err) {
    if (err instanceof HttpError) {
      console.error(errorLine(err.status, err.body));
      return EXIT.refused;
    }
    console.error(`error: cannot reach the service at ${env.baseUrl} (is it running? set CHATGATE_URL or PORT)`);
    return EXIT.unreachable;
  }
  // An error answer is one line on stderr (`error: 400 validation_error: name must be …`), exit 1.
  if (!res.ok) {
    console.error(errorLine(res.status, text));
    return EXIT.refused;
  }
  return printAnswer(name, command, v, res, text);

  /** Every page of a paged list, merged into one answer. */
  async function followCursors(first: Record<string, unknown>, field: string) {
    const items = [...(first[field] as unknown[])];
    let cursor = first.nextCursor as string | null;
    while (cursor) {
      const url = new URL(`${env.baseUrl}${path}`);
      url.searchParams.set('cursor', cursor);
      const next = await request(url.toString());
      const nextText = await next.text();
      if (!next.ok) throw new HttpError(next.status, nextText);
      const answer = JSON.parse(nextText) as Record<string, unknown>;
      items.push(...(answer[field] as unknown[]));
      cursor = answer.nextCursor as string | null;
    }
    return { [field]: items, nextCursor: null };
  }
}

type CommandLine = ReturnType<typeof parseCommandLine>;

/** The operator API call a command makes: method, path and body. */
function routeOf(name: string, id: CommandLine['id'], v: CommandLine['v']): [string, string, unknown?] {
  const query = (params: Record<string, string | undefined>) => {
    const q = new URLSearchParams(clean(params) as Record<string, string>).toString();
    return q ? `?${q}` : '';
  };
  const page = { limit: v.limit, cursor: v.cursor };
  const routes: Record<string, () => [string, string, unknown?]> = {
    'customers create': () => [
      'POST',
      '/admin/customers',
      clean({ name: v.name, plan: v.plan, defaultCountry: v['default-country'] }),
    ],
    'customers list': () => ['GET', `/admin/customers${query({ q: v.search, plan: v.plan, ...page })}`],
    'customers get': () => ['GET', `/admin/customers/${id}`],
    'customers update': () => [
      'PATCH',
      `/admin/customers/${id}`,
      clean({ name: v.name, plan: v.plan, defaultCountry: v['default-country'] }),
    ],
    'accounts create': () => [
      'POST',
      `/admin/customers/${id}/chat-accounts${v['no-verify'] ? '' : '?verify=true'}`,
      accountBody(v),
    ],
    'accounts update': () => [
      'PATCH',
      `/admin/chat-accounts/${id}${v['no-verify'] ? '' : '?verify=true'}`,
      accountBody(v),
    ],
    'accounts list': () => ['GET', `/admin/customers/${id}/chat-accounts${query(page)}`],
    'keys create': () => [
      'POST',
      `/admin/customers/${id}/api-keys`,
      clean({ sandbox: v.sandbox, chatAccountId: v.account, templateAccess: v['template-access'], name: v.name }),
    ],
    'keys list': () => ['GET', `/admin/customers/${id}/api-keys`],
    'keys revoke': () => ['DELETE', `/admin/api-keys/${id}`],
    'users create': () => ['POST', `/admin/customers/${id}/users`, clean({ email: v.email, role: v.role })],
    'users list': () => ['GET', `/admin/customers/${id}/users`],
    'users reset-password': () => ['POST', `/admin/portal-users/${id}/reset-password`],
    'users disable': () => ['POST', `/admin/portal-users/${id}/disable`],
    usage: () => ['GET', `/admin/customers/${id}/usage${query({ month: v.month })}`],
    rekey: () => ['POST', '/admin/encryption/rekey'],
  };
  return routes[name]!();
}

/**
 * Prints a successful answer: a table for lists and gets (unless --json), one field with --quiet,
 * else the JSON. The exit code: 0, or 3 when an account was saved with a token the provider could
 * not check (it stays AUTHENTICATING until the prober verifies it, decision 0072).
 */
function printAnswer(name: string, command: CommandLine['command'], v: CommandLine['v'], res: Response, text: string) {
  const check = text.startsWith('{')
    ? (JSON.parse(text) as { credentialCheck?: { result: string; detail: string | null } }).credentialCheck
    : undefined;
  if (check?.result === 'unverified')
    console.error(
      name === 'accounts create'
        ? `chatgate admin ${name}: saved as AUTHENTICATING, not CONNECTED: the access token could not be checked with the provider (${check.detail ?? 'no answer'}); the account prober checks it again and connects it once the provider accepts it (exit 3)`
        : `chatgate admin ${name}: saved, but the access token could not be checked with the provider (${check.detail ?? 'no answer'}) (exit 3)`,
    );
  const view = VIEWS[name];
  if (res.ok && v.quiet && command.quiet && text)
    console.log(String((JSON.parse(text) as Record<string, unknown>)[command.quiet]));
  else if (res.ok && view && !v.json && text) console.log(view(JSON.parse(text)));
  else if (text) console.log(text.startsWith('{') ? JSON.stringify(JSON.parse(text), null, 2) : text);
  else console.log(`${res.status} ${res.statusText}`);
  return check?.result === 'unverified' ? EXIT.unverified : EXIT.ok;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super('error answer');
  }
}
