// How `chatgate admin` shows list and get answers to people (tables); --json prints the answer as is.
import { type Column, renderRecord, renderTable } from './table.js';

type Row = Record<string, unknown>;

/** A nested field of a JSON answer, or undefined. */
const at = (o: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Row)[k] : undefined), o);

const customerColumns: Column<Row>[] = [
  { title: 'ID', value: (c) => c.id },
  { title: 'NAME', value: (c) => c.name },
  { title: 'PLAN', value: (c) => c.plan },
  { title: 'COUNTRY', value: (c) => c.defaultCountry },
  { title: 'CREATED', value: (c) => c.createdAt },
];

const accountColumns: Column<Row>[] = [
  { title: 'ID', value: (a) => a.id },
  { title: 'TYPE', value: (a) => a.type },
  { title: 'STATUS', value: (a) => a.status },
  { title: 'PHONE', value: (a) => a.phoneNumber },
  { title: 'NAME', value: (a) => a.displayName },
  { title: 'PHONE NUMBER ID', value: (a) => at(a, 'official', 'phoneNumberId') },
  { title: 'POLICY', value: (a) => at(a, 'sendPolicy', 'mode') },
  { title: 'MPS', value: (a) => a.throughputMps },
  { title: 'ERROR', value: (a) => a.lastErrorCode },
  { title: 'NEXT PROBE', value: (a) => at(a, 'probe', 'nextAt') },
];

const keyColumns: Column<Row>[] = [
  { title: 'ID', value: (k) => k.id },
  { title: 'KEY', value: (k) => k.maskedKey },
  { title: 'NAME', value: (k) => k.name },
  { title: 'SANDBOX', value: (k) => k.sandbox },
  { title: 'ACCOUNT', value: (k) => k.chatAccountId },
  { title: 'TEMPLATES', value: (k) => k.templateAccess },
  { title: 'CREATED', value: (k) => k.createdAt },
  { title: 'REVOKED', value: (k) => k.revokedAt },
  { title: 'LAST USED', value: (k) => k.lastUsedAt },
];

const more = (answer: Row) =>
  typeof answer.nextCursor === 'string' ? `\n(more: --cursor ${answer.nextCursor}, or --all)` : '';

/** Renderers by command; commands not listed here print their JSON answer. */
export const VIEWS: Record<string, (answer: Row) => string> = {
  'customers list': (a) => renderTable(customerColumns, a.customers as Row[]) + more(a),
  'customers get': (c) =>
    renderRecord([
      ['id', c.id],
      ['name', c.name],
      ['plan', c.plan],
      ['defaultCountry', c.defaultCountry],
      ['createdAt', c.createdAt],
      ['updatedAt', c.updatedAt],
      [
        'usage',
        c.usage
          ? `${String(at(c, 'usage', 'used'))} of ${String(at(c, 'usage', 'limit'))} in ${String(at(c, 'usage', 'month')).slice(0, 7)}`
          : null,
      ],
    ]),
  'accounts list': (a) => renderTable(accountColumns, a.chatAccounts as Row[]) + more(a),
  'keys list': (a) => renderTable(keyColumns, a.apiKeys as Row[]),
  usage: (u) =>
    renderRecord([
      ['customerId', u.customerId],
      ['month', u.month],
      ['plan', u.plan],
      ['used', u.used],
      ['limit', u.limit],
      ['remaining', u.remaining],
      ['resetsAt', u.resetsAt],
    ]),
};

/** The list field of each paged command, for --all. */
export const PAGED: Record<string, string> = {
  'customers list': 'customers',
  'accounts list': 'chatAccounts',
};
