// The queue gauge's states (chatgate_queue_messages): since an attempt counts as its send starts
// (decision 0021), a message with one attempt under a live lease is being sent, not waiting for a
// retry; only one whose attempt ended and that waits for the next is retry_wait.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { readQueue } from '../src/metrics/snapshot-store.js';
import { call, createTenant, type Service, startService, textMessage } from './support/harness.js';

describe('queue gauge states', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api' }); // no worker: the rows change only here
  });
  afterAll(() => svc?.stop());

  it('counts a first attempt in flight as queued and a message between attempts as retry_wait', async () => {
    const t = await createTenant(svc.url);
    const ids: string[] = [];
    for (const ext of ['gauge-pending', 'gauge-in-flight', 'gauge-retry']) {
      const r = await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage(ext) });
      ids.push(r.body.messageId as string);
    }
    const [, inFlight, retry] = ids;
    await svc.db.query(
      `UPDATE messages SET status = 'queued', attempt_count = 1, locked_by = 'w', locked_until = now() + interval '30 seconds'
        WHERE id = $1`,
      [inFlight],
    );
    await svc.db.query(
      `UPDATE messages SET status = 'queued', attempt_count = 1, locked_by = NULL, locked_until = NULL WHERE id = $1`,
      [retry],
    );
    const depth = Object.fromEntries((await readQueue(svc.db)).map((r) => [r.state, r.depth]));
    expect(depth).toEqual({ pending: 1, queued: 1, retry_wait: 1 });
  });
});
