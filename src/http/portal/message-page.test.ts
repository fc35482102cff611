// The message page's timeline in words: which attempt an event reports, a retry's answer and next
// try, a cancellation, a receipt's failure, a failure with no attempt; never a literal null.
import { describe, expect, it } from 'vitest';

import type { Message } from '../../messages/message-view.js';
import type { MessageHistory } from '../../portal/message-history.js';
import { html } from './html.js';
import { errorLine, timelineEntries, timelineView } from './message-page.js';

const T0 = '2026-11-26T10:00:00.000Z';
const t = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();

function message(over: Partial<Message>): Message {
  return {
    messageId: '00000000-0000-4000-8000-000000000001',
    externalId: 'x-1',
    recipient: '+15551230001',
    recipientUserId: null,
    channel: 'official',
    status: 'failed',
    attemptCount: 0,
    lastErrorCode: null,
    broadcastId: null,
    chatAccountId: '00000000-0000-4000-8000-000000000002',
    createdAt: T0,
    scheduledAt: null,
    sentAt: null,
    deliveredAt: null,
    readAt: null,
    failedAt: null,
    providerMessageId: null,
    expiresAt: t(86400),
    sandbox: false,
    processing: {
      queueState: 'done',
      attemptCount: 0,
      maxAttempts: 5,
      nextAttemptAt: null,
      lastAttemptAt: null,
      route: null,
    },
    error: null,
    metadata: null,
    pricing: null,
    reactions: [],
    ...over,
  } as Message;
}

const unavailable = {
  code: 'PROVIDER_UNAVAILABLE',
  message: 'Try later',
  provider: { code: 2, subcode: null, message: 'Try later' },
};
const event = (status: string, previousStatus: string, at: string, error: unknown = null) => ({
  eventId: `evt_${status}`,
  createdAt: at,
  data: { status, previousStatus, timestamp: at, error: error as never },
});
const history = (over: Partial<MessageHistory>): MessageHistory => ({
  retries: [],
  events: [],
  deliveries: [],
  ...over,
});
const words = (m: Message, h: MessageHistory) =>
  timelineEntries(m, h).map((e) => html`${e.what}`.value.replace(/\s+/g, ' '));

describe('the message timeline', () => {
  it('numbers two retried attempts and the third that failed for good, each with its answer and next try', () => {
    const h = history({
      retries: [
        { attempt: 1, attemptedAt: t(1), error: unavailable, nextAttemptAt: t(31) },
        { attempt: 2, attemptedAt: t(31), error: unavailable, nextAttemptAt: t(151) },
      ],
      events: [event('failed', 'queued', t(151), { code: 'INVALID_RECIPIENT', message: 'Not on the network' })],
    });
    const w = words(message({ attemptCount: 3 }), h);
    expect(w[1]).toMatch(
      /^Attempt 1 failed, to be tried again: Try later \(<code>PROVIDER_UNAVAILABLE<\/code>\); provider code 2\. Next attempt at <time datetime="2026-11-26T10:00:31.000Z">/,
    );
    expect(w[2]).toMatch(/^Attempt 2 failed, to be tried again/);
    expect(w[3]).toBe('Attempt 3 failed for good: Not on the network (<code>INVALID_RECIPIENT</code>).');
  });

  it('does not number a failure that came with no attempt after the last retry, nor one before any attempt', () => {
    const retried = history({
      retries: [{ attempt: 1, attemptedAt: t(1), error: unavailable, nextAttemptAt: t(31) }],
      events: [event('failed', 'queued', t(20), { code: 'SEND_INTERRUPTED', message: 'Stopped' })],
    });
    expect(words(message({ attemptCount: 1 }), retried).at(-1)).toBe(
      'Failed for good: Stopped (<code>SEND_INTERRUPTED</code>).',
    );
    const none = history({
      events: [event('failed', 'pending', t(1), { code: 'RECIPIENT_OPTED_OUT', message: 'Opted out' })],
    });
    expect(words(message({}), none).at(-1)).toMatch(/^Failed before any send attempt: Opted out/);
  });

  it('lists an attempt before its receipt when the receipt, in whole seconds, reads earlier (issue #37)', () => {
    const h = history({
      events: [
        event('sent', 'queued', new Date(Date.parse(T0) + 1700).toISOString()),
        event('failed', 'sent', t(1), { code: 'PROVIDER_ERROR', message: 'Undeliverable' }),
        event('read', 'delivered', t(2)),
        event('delivered', 'sent', t(3)),
      ],
    });
    const w = words(message({ attemptCount: 1, status: 'read' }), h);
    expect(w[1]).toMatch(/^Attempt 1: the provider accepted/);
    expect(w[2]).toMatch(/^Receipt: failed after it was sent/);
    expect(w[3]).toBe('Receipt: delivered to the phone.');
    expect(w[4]).toBe('Receipt: read by the recipient.');
  });

  it('tells a cancellation, a receipt and a receipt failure apart, and the next attempt of a waiting message', () => {
    const cancelled = history({
      events: [event('failed', 'pending', t(5), { code: 'CANCELLED', message: 'Cancelled by the caller' })],
    });
    expect(words(message({}), cancelled).at(-1)).toMatch(/^Cancelled: /);
    const receipts = history({
      events: [
        event('sent', 'queued', t(1)),
        event('delivered', 'sent', t(2)),
        event('failed', 'delivered', t(3), { code: 'PROVIDER_ERROR', message: 'Undeliverable' }),
      ],
    });
    const w = words(message({ attemptCount: 1, providerMessageId: 'wamid.X' }), receipts);
    expect(w.slice(1)).toEqual([
      'Attempt 1: the provider accepted the message (provider message id <code>wamid.X</code>).',
      'Receipt: delivered to the phone.',
      'Receipt: failed after it was sent: Undeliverable (<code>PROVIDER_ERROR</code>).',
    ]);
    const waiting = message({
      status: 'queued',
      attemptCount: 1,
      processing: {
        queueState: 'retry_scheduled',
        attemptCount: 1,
        maxAttempts: 5,
        nextAttemptAt: t(60),
        lastAttemptAt: t(1),
        route: null,
      },
    });
    expect(words(waiting, history({})).at(-1)).toBe('Next attempt due (attempt 2 of at most 5).');
  });

  it('never prints null: an error without a provider part, a delivery without an answer', () => {
    expect(
      html`${errorLine({ code: 'X', message: 'm', provider: { code: null, subcode: null, message: null } } as never)}`
        .value,
    ).toBe('m (<code>X</code>)');
    const h = history({
      events: [event('sent', 'queued', t(1))],
      deliveries: [
        {
          id: 'd1',
          eventId: 'evt_sent',
          endpointId: 'e1',
          endpointUrl: 'https://example.com/hook',
          sandboxEndpoint: false,
          status: 'pending',
          attemptCount: 0,
          nextAttemptAt: null,
          lastStatusCode: null,
          createdAt: t(1),
        },
      ],
    });
    const out = timelineView(message({ status: 'sent', attemptCount: 1 }), h).value;
    expect(out).toContain('Webhook to <a href="/portal/webhooks/e1">https://example.com/hook</a>: waiting, 0');
    expect(out).not.toMatch(/\bnull\b/);
  });
});
