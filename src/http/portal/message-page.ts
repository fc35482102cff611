// One message, investigated (issue #27, decision 0048): its fields in words, linked to its
// account, broadcast and conversation; a timeline of every send attempt (time, the provider's
// answer or error, the next try), every receipt that moved it, and every webhook delivery of its
// events, each linked to its endpoint and delivery; then the error, metadata and content.
import type { Tenant } from '../../auth/directory.js';
import type { Message } from '../../messages/message-view.js';
import { PLAN_LIMITS } from '../../plans/plans.js';
import type { HistoryDelivery, HistoryEvent, MessageHistory } from '../../portal/message-history.js';
import { isCancelled } from '../../shared/vocab.js';
import { defaultKeptDays, when } from './format.js';
import { type Html, html, type Part } from './html.js';
import { sandboxBadge } from './layout.js';
import { shownStatus } from './messages-views.js';

type ErrorLike = { code?: unknown; message?: unknown; provider?: Record<string, unknown> } | null | undefined;

/** A time, machine-readable too; a dash when there is none. */
export const at = (iso: string | null | undefined): Html =>
  iso ? html`<time datetime="${iso}">${when(iso)}</time>` : html`—`;

/** Label/value rows; a row whose value is null or undefined is left out (no literal nulls). */
export function fieldList(rows: [string, Part | null | undefined][]): Html {
  return html`<dl class="fields">
    ${rows
      .filter(([, v]) => v !== null && v !== undefined && v !== '')
      .map(
        ([k, v]) =>
          html`<dt>${k}</dt>
            <dd>${v}</dd>`,
      )}
  </dl>`;
}

/** The provider's part of an error, in words. */
const PROVIDER_LABELS: Record<string, string> = {
  code: 'Provider error code',
  subcode: 'Provider error subcode',
  message: 'Provider message',
  fbtraceId: 'Provider trace id',
  source: 'Reported by',
};
const SOURCES: Record<string, string> = { send_attempt: 'the answer to a send', status_webhook: 'a receipt' };

/** An error as a short line: "message (CODE); provider 131026: …". */
export function errorLine(e: ErrorLike): Part {
  if (!e) return '';
  const p = e.provider;
  const codes = p ? [p.code, p.subcode].filter((x) => x !== null && x !== undefined) : [];
  // The provider's own words only when they add to the message (it often repeats them).
  const words = p?.message && p.message !== e.message ? `: ${String(p.message)}` : '';
  const provider = codes.length > 0 || words ? `; provider code ${codes.join('/') || 'not given'}${words}` : '';
  return html`${String(e.message ?? '')} (<code>${String(e.code ?? '')}</code>)${provider}`;
}

/** An error with every provider detail it has, in words. */
export function errorFields(e: ErrorLike): Html {
  if (!e) return html`<p>None.</p>`;
  const p = e.provider ?? {};
  return fieldList([
    ['Code', html`<code>${String(e.code ?? '')}</code>`],
    ['Description', e.message === undefined || e.message === null ? null : String(e.message)],
    ...Object.entries(p).map(([k, v]): [string, Part | null] => [
      PROVIDER_LABELS[k] ?? k,
      v === null || v === undefined ? null : k === 'source' ? (SOURCES[String(v)] ?? String(v)) : String(v),
    ]),
  ]);
}

/**
 * A timeline step. `rank` is its place in a message's life (accepted, scheduled, failed attempts,
 * the accepted attempt, receipts, the next attempt), which decides between steps of one time.
 */
type Entry = { at: string; what: Part; rank: number; deliveries?: HistoryDelivery[] };

/** Where an event stands in a message's life: the attempt's outcome before the receipts it leads to. */
function eventRank(e: HistoryEvent): number {
  const d = e.data;
  const fromQueue = d.previousStatus === 'pending' || d.previousStatus === 'queued';
  if (d.status === 'sent') return 3;
  if (d.status === 'delivered') return 5;
  if (d.status === 'read') return 6;
  if (d.status === 'failed') return fromQueue ? 3 : 5;
  return 4;
}

/** What a status event says, in words: an attempt's outcome or a receipt. */
function eventWhat(e: HistoryEvent, m: Message, attemptNo: number | null): Part {
  const d = e.data;
  const fromQueue = d.previousStatus === 'pending' || d.previousStatus === 'queued';
  if (d.status === 'sent')
    return html`${attemptNo ? `Attempt ${attemptNo}: the` : 'The'} provider accepted the
    message${m.providerMessageId ? html` (provider message id <code>${m.providerMessageId}</code>)` : ''}.`;
  if (d.status === 'delivered') return 'Receipt: delivered to the phone.';
  if (d.status === 'read') return 'Receipt: read by the recipient.';
  if (d.status === 'failed') {
    if (isCancelled(d.status, d.error?.code)) return html`Cancelled: ${errorLine(d.error)}.`;
    if (fromQueue && attemptNo === 0) return html`Failed before any send attempt: ${errorLine(d.error)}.`;
    // No attempt after the last retry (the message expired or was stopped while it waited).
    if (fromQueue && attemptNo === null) return html`Failed for good: ${errorLine(d.error)}.`;
    return fromQueue
      ? html`Attempt ${attemptNo} failed for good: ${errorLine(d.error)}.`
      : html`Receipt: failed after it was sent: ${errorLine(d.error)}.`;
  }
  return `Now ${d.status}.`;
}

/** Every step, oldest first; each event with the deliveries that carried it to endpoints. */
export function timelineEntries(m: Message, h: MessageHistory): Entry[] {
  const entries: Entry[] = [{ at: m.createdAt, what: 'Accepted: waiting to be sent.', rank: 0 }];
  if (m.scheduledAt) entries.push({ at: m.scheduledAt, what: 'Scheduled to leave at this time.', rank: 1 });
  for (const r of h.retries)
    entries.push({
      at: r.attemptedAt,
      what: html`Attempt ${r.attempt} failed, to be tried again:
      ${errorLine(r.error)}.${r.nextAttemptAt ? html` Next attempt at ${at(r.nextAttemptAt)}.` : ''}`,
      rank: 2,
    });
  const lastRetry = h.retries.at(-1)?.attempt ?? 0;
  for (const e of h.events)
    entries.push({
      at: e.data.timestamp ?? e.createdAt,
      // The attempt an event reports is the last one counted, unless a retry already told of that one.
      what: eventWhat(e, m, lastRetry > 0 && m.attemptCount <= lastRetry ? null : m.attemptCount),
      rank: eventRank(e),
      deliveries: h.deliveries.filter((d) => d.eventId === e.eventId),
    });
  const open = m.status === 'pending' || m.status === 'queued';
  if (open && m.processing.nextAttemptAt)
    entries.push({
      at: m.processing.nextAttemptAt,
      what: `Next attempt due (attempt ${m.attemptCount + 1} of at most ${m.processing.maxAttempts}).`,
      rank: 7,
    });
  // A receipt carries the provider's time in whole seconds, so it can read earlier than the
  // accepted attempt it reports on (recorded to the millisecond): no step is listed before a step
  // of a lower rank that happened before it, and steps of one time go in rank order.
  const keyed = entries.map((e) => ({
    e,
    key: entries
      .filter((o) => o.rank < e.rank && o.rank >= 2 && e.rank >= 3 && e.rank <= 6)
      .reduce((k, o) => (o.at > k ? o.at : k), e.at),
  }));
  return keyed.sort((a, b) => a.key.localeCompare(b.key) || a.e.rank - b.e.rank).map((k) => k.e);
}

const DELIVERY_STATUS: Record<string, string> = {
  pending: 'waiting',
  succeeded: 'delivered',
  failed: 'failed (no more retries)',
};

function deliveryItem(d: HistoryDelivery): Html {
  const target = d.sandboxEndpoint
    ? html`${d.endpointUrl} (a sandbox key's endpoint)`
    : html`<a href="/portal/webhooks/${d.endpointId}">${d.endpointUrl}</a>`;
  const detail = d.sandboxEndpoint
    ? ''
    : html` — <a href="/portal/webhooks/${d.endpointId}/deliveries/${d.id}">delivery details</a>`;
  return html`<li class="delivery">
    Webhook to ${target}: ${DELIVERY_STATUS[d.status] ?? d.status}, ${d.attemptCount}
    ${d.attemptCount === 1 ? 'attempt' : 'attempts'}${d.lastStatusCode !== null ? `, last answer HTTP ${d.lastStatusCode}` : ''}${
      d.nextAttemptAt ? html`, next attempt at ${at(d.nextAttemptAt)}` : ''
    }${detail}
  </li>`;
}

export function timelineView(m: Message, h: MessageHistory): Html {
  const entries = timelineEntries(m, h);
  return html`<ol class="timeline">
      ${entries.map(
        (e) =>
          html`<li>
            ${at(e.at)} ${e.what}
            ${
              e.deliveries && e.deliveries.length > 0
                ? html`<ul>
                    ${e.deliveries.map(deliveryItem)}
                  </ul>`
                : ''
            }
          </li>`,
      )}
    </ol>
    ${
      h.events.length === 0 && m.status !== 'pending' && m.status !== 'queued'
        ? html`<p class="hint">
            The attempts' and receipts' details are kept 30 days (with the events); the times above come from the
            message.
          </p>`
        : ''
    }`;
}

const QUEUE_STATES: Record<string, string> = {
  waiting: 'waiting to be picked up',
  in_flight: 'being sent now',
  retry_scheduled: 'waiting for its next attempt after a failure',
  done: 'left the queue',
};

/** The message's fields in words, with its account, broadcast and conversation linked. */
export function messageFields(m: Message, tenant: Tenant): Html {
  const account = tenant.accounts.find((a) => a.id === m.chatAccountId);
  const p = m.pricing;
  return fieldList([
    ['Message id', html`<code>${m.messageId}</code>`],
    ['Your id (externalId)', m.externalId],
    ['Recipient', m.recipient],
    ['Recipient user id', m.recipientUserId],
    ['Channel', m.channel],
    ['Status', html`<span class="status status-${shownStatus(m)}">${shownStatus(m)}</span>`],
    [
      'Account',
      html`${account ? `${account.displayName} (${account.phoneNumber})` : m.chatAccountId} —
        <a href="/portal/messages?chatAccountId=${m.chatAccountId}">its messages</a>,
        <a href="/portal/accounts">accounts</a>`,
    ],
    ['Broadcast', m.broadcastId ? html`<a href="/portal/broadcasts/${m.broadcastId}">${m.broadcastId}</a>` : null],
    ['Send attempts', `${m.attemptCount} of at most ${m.processing.maxAttempts}`],
    ['Queue', QUEUE_STATES[String(m.processing.queueState)] ?? String(m.processing.queueState)],
    [
      'Sent over',
      m.processing.route === 'marketing_messages'
        ? 'the Marketing Messages API'
        : m.processing.route
          ? 'the messages API'
          : null,
    ],
    ['Provider message id', m.providerMessageId ? html`<code>${m.providerMessageId}</code>` : null],
    ['Created', at(m.createdAt)],
    ['Scheduled for', m.scheduledAt ? at(m.scheduledAt) : null],
    ['Sent', m.sentAt ? at(m.sentAt) : null],
    ['Delivered', m.deliveredAt ? at(m.deliveredAt) : null],
    ['Read', m.readAt ? at(m.readAt) : null],
    [shownStatus(m) === 'cancelled' ? 'Cancelled' : 'Failed', m.failedAt ? at(m.failedAt) : null],
    [
      'Kept until',
      html`${at(m.expiresAt)}
        <span class="muted"
          >(its lifetime: ${defaultKeptDays(tenant.plan)} days unless the send asked otherwise, at most
          ${PLAN_LIMITS[tenant.plan].retentionDays} on your plan)</span
        >`,
    ],
    ['Mode', m.sandbox ? sandboxBadge(true) : 'live'],
    [
      'Pricing',
      p
        ? `${p.category ?? 'category not said'}, ${p.billable === null ? 'billable not said' : p.billable ? 'billable' : 'free'} (${p.type ?? 'type not said'}, ${p.pricingModel ?? 'model not said'})`
        : null,
    ],
  ]);
}
