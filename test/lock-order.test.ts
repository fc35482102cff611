// One lock order for message rows everywhere: the dispatcher's outcome write (applyTransitions)
// and a receipt batch (applyReceipts) over the same messages, each given them in the opposite
// order, must never deadlock (a deadlocked outcome write could be lost and the message sent
// again). Both take the rows in id order; this races them many times on real connections.
// PostgreSQL only: PGlite has one connection, whose transactions run one after another, so
// nothing there can deadlock and the race would prove nothing.
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { applyReceipts, type ReceiptItem } from '../src/lifecycle/apply-receipt.js';
import { applyTransitions } from '../src/lifecycle/apply-transitions.js';
import { claimDue } from '../src/lifecycle/claim.js';
import * as transition from '../src/lifecycle/transitions.js';
import { backend, call, createTenant, type Service, startService, textMessage } from './support/harness.js';

const ROUNDS = 12;
const PER_ROUND = 60;

describe.skipIf(backend !== 'postgres')('message row lock order (postgres)', () => {
  let svc: Service;
  const worker = 'lock-order-test-worker';

  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc?.stop());

  it('outcome writes and receipt batches over the same rows in opposite orders never deadlock, and all apply', async () => {
    const t = await createTenant(svc.url);
    const total = ROUNDS * PER_ROUND;
    for (let i = 0; i < total; i += 40) {
      const replies = await Promise.all(
        Array.from({ length: Math.min(40, total - i) }, (_, j) =>
          call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage(`lo-${i + j}`) }),
        ),
      );
      expect(replies.every((r) => r.status === 201)).toBe(true);
    }
    const claimed = await claimDue(svc.db, worker, total, 300);
    expect(claimed).toHaveLength(total);
    const ids = claimed.map((m) => m.id).sort();
    const wamids = new Map(ids.map((id) => [id, `wamid.${crypto.randomBytes(10).toString('hex')}`]));

    for (let r = 0; r < ROUNDS; r++) {
      const round = ids.slice(r * PER_ROUND, (r + 1) * PER_ROUND);
      // The dispatcher records the sends in descending id order, the provider's receipts (echoing
      // our id) arrive in ascending order; no retry here, so a deadlock would surface as an error.
      const sends = [...round]
        .reverse()
        .map((id) => transition.sent({ id, status: 'queued' }, new Date(), wamids.get(id)!));
      const receipts: ReceiptItem[] = round.map((id) => ({
        accountId: t.accountId,
        receipt: {
          phoneNumberId: '',
          providerMessageId: wamids.get(id)!,
          status: 'delivered',
          occurredAt: new Date(),
          messageId: id,
          error: null,
        },
      }));
      const results = await Promise.allSettled([
        svc.db.transaction((tx) => applyTransitions(tx, worker, sends)),
        svc.db.transaction((tx) => applyReceipts(tx, receipts)),
      ]);
      const errors = results.flatMap((x) => (x.status === 'rejected' ? [String(x.reason)] : []));
      expect(errors).toEqual([]);
    }

    // Whichever came first, every message ends delivered with its wamid: sent by the outcome and
    // then delivered by the receipt, or taken through sent and delivered by the receipt alone.
    const rows = await svc.db.query<{ status: string; provider_message_id: string; id: string }>(
      'SELECT id, status, provider_message_id FROM messages WHERE id = ANY($1::uuid[])',
      [ids],
    );
    expect(rows).toHaveLength(total);
    for (const row of rows) {
      expect(row.status).toBe('delivered');
      expect(row.provider_message_id).toBe(wamids.get(row.id));
    }
  });
});
