// The messages list as CSV (`/portal/messages.csv?<the list's filters>`): the same filters and the
// same message queries as the page, with the session's caller, streamed page by page, newest
// first, at most CSV_MAX_ROWS rows (decision 0043). UTF-8 with a byte order mark (spreadsheets
// then read non-ASCII text right), RFC 4180 quoting; a cell a spreadsheet would read as a formula
// (= + - @, tab, carriage return first) gets a leading apostrophe, except a phone number in
// international form (+ and digits only: no formula), so the export can be imported again as a
// broadcast's recipients (decision 0066).
import { Readable } from 'node:stream';

import type { FastifyReply } from 'fastify';

import type { Caller } from '../../auth/caller.js';
import type { Tenant } from '../../auth/directory.js';
import type { Message } from '../../messages/message-view.js';
import type { PortalDeps } from './deps.js';
import type { PageQuery } from './input.js';
import { CSV_MAX_ROWS, filtersOf, searchQuery, shownStatus } from './messages-views.js';

/** Rows read per query while streaming. */
const BATCH = 1000;

const COLUMNS = [
  'Created',
  'External id',
  'Recipient',
  'Account',
  'Account number',
  'Content',
  'Message text',
  'Status',
  'Error code',
  'Error message',
  'Attempts',
  'Scheduled for',
  'Sent',
  'Delivered',
  'Read',
  'Failed',
  'Provider message id',
  'Broadcast id',
  'Mode',
  'Message id',
] as const;

/** A phone number in international form: a plus and digits, which no spreadsheet runs as a formula. */
const PHONE = /^\+[1-9]\d{6,14}$/;

/** One CSV field: formula starts neutralised, then quoted when it holds a quote, comma or line break. */
export function csvCell(value: string | number | null | undefined): string {
  let s = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(s) && !PHONE.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const csvLine = (cells: readonly (string | number | null | undefined)[]) => `${cells.map(csvCell).join(',')}\r\n`;

function messageLine(m: Message, contentKind: string, words: string, tenant: Tenant): string {
  const account = tenant.accounts.find((a) => a.id === m.chatAccountId);
  const error = m.error as { code?: unknown; message?: unknown } | null;
  return csvLine([
    m.createdAt,
    m.externalId,
    m.recipient,
    account?.displayName ?? m.chatAccountId,
    account?.phoneNumber,
    contentKind,
    words,
    shownStatus(m),
    error?.code === undefined ? null : String(error.code),
    error?.message === undefined ? null : String(error.message),
    m.attemptCount,
    m.scheduledAt,
    m.sentAt,
    m.deliveredAt,
    m.readAt,
    m.failedAt,
    m.providerMessageId,
    m.broadcastId,
    m.sandbox ? 'sandbox' : 'live',
    m.messageId,
  ]);
}

type Batch = Awaited<ReturnType<PortalDeps['messages']['search']>>;

/** The header, the first batch (read before answering) and the batches after it, up to CSV_MAX_ROWS rows. */
async function* csvLines(
  read: (limit: number, cursor: string) => Promise<Batch>,
  first: Batch,
  tenant: Tenant,
): AsyncGenerator<string> {
  yield `\uFEFF${csvLine(COLUMNS)}`;
  let batch = first;
  let written = 0;
  for (;;) {
    const b = batch;
    yield b.messages.map((m, i) => messageLine(m, b.contentKinds[i] ?? '', b.contentWords[i] ?? '', tenant)).join('');
    written += b.messages.length;
    if (b.nextCursor === null || written >= CSV_MAX_ROWS) return;
    batch = await read(Math.min(BATCH, CSV_MAX_ROWS - written), b.nextCursor);
  }
}

/**
 * Answers the export: the filters checked and the first batch read before anything is sent (a
 * problem, such as another customer's account, is the portal's error page), then the rest as read.
 */
export async function sendMessagesCsv(
  deps: PortalDeps,
  reply: FastifyReply,
  caller: Caller,
  tenant: Tenant,
  q: PageQuery,
): Promise<FastifyReply> {
  const query = searchQuery(filtersOf(q));
  const read = (limit: number, cursor?: string) => deps.messages.search(caller, { ...query, limit, cursor });
  const first = await read(BATCH);
  const day = new Date().toISOString().slice(0, 10);
  return reply
    .header('content-type', 'text/csv; charset=utf-8; header=present')
    .header('content-disposition', `attachment; filename="messages-${day}.csv"`)
    .send(Readable.from(csvLines(read, first, tenant)));
}
