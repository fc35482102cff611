// What a dispatcher tells its log (issue #36): a warn line for each lease takeover (a message
// claimed while another worker's lease on it had expired unfinished), and one info line per
// period (WORKER_ACTIVITY_LOG_MS, a minute by default) with what it sent, failed and retried and
// the backlog. The worker that died is a real claim (claimDue, the dispatcher's own) by a worker
// id that then does nothing more, as a process killed after its claim would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type App, createApp, createLogger } from '../src/app.js';
import { claimDue } from '../src/lifecycle/claim.js';
import {
  call,
  createTenant,
  eventually,
  type Service,
  startService,
  testConfig,
  textMessage,
} from './support/harness.js';

type Line = { msg?: string; level?: number; [k: string]: unknown };
const WARN = 40;
const INFO = 30;

describe('the dispatcher in the log: lease takeovers and its activity line', () => {
  let api: Service;
  let worker: App | null = null;
  const lines: Line[] = [];

  beforeAll(async () => {
    api = await startService({ role: 'api' });
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.stop();
  });

  it('warns once per message taken over from a dead worker, and counts its sends in the activity line', async () => {
    const t = await createTenant(api.url, { plan: 'pro' });
    const sent = await call(api.url, 'POST', '/messages', { key: t.sandboxKey, body: textMessage('takeover-1') });
    expect(sent.status).toBe(201);
    const id = sent.body.messageId as string;
    // A worker claims it with a one-second lease and dies.
    const dead = 'dead-host:4242:deadbeef';
    expect((await claimDue(api.db, dead, 10, 1)).map((m) => m.id)).toEqual([id]);

    const log = createLogger({ logLevel: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Line) });
    worker = await createApp(testConfig({ WORKER_ACTIVITY_LOG_MS: '300' }), { db: api.db, log, role: 'worker' });
    await worker.start();

    const takeover = await eventually(async () =>
      lines.find((l) => l.level === WARN && String(l.msg).startsWith('lease takeover') && l.messageId === id),
    );
    expect(takeover).toMatchObject({
      previousWorker: dead,
      customerId: t.customerId,
      accountId: t.accountId,
    });
    expect(takeover.worker).not.toBe(dead);
    // The message goes on to be sent (sandbox) by its new holder.
    await eventually(async () => {
      const m = await call(api.url, 'GET', `/messages/${id}`, { key: t.sandboxKey });
      return ['sent', 'delivered', 'read'].includes(m.body.status);
    });
    const activity = await eventually(async () =>
      lines.find((l) => l.level === INFO && l.msg === 'worker activity' && Number(l.sent) >= 1),
    );
    expect(activity).toMatchObject({ worker: takeover.worker, failed: 0, retried: 0 });
    expect(typeof activity.backlog).toBe('number');
    expect(Number(activity.periodSeconds)).toBeGreaterThanOrEqual(0);
    // One takeover line for the message, however many passes followed.
    expect(lines.filter((l) => String(l.msg).startsWith('lease takeover') && l.messageId === id)).toHaveLength(1);
  });

  it('counts failed and retried messages in the activity line', async () => {
    // A live account whose provider is unreachable (PROVIDER_BASE_URL: nothing listens): the send
    // fails at connect, is retried (scaled delays) and ends failed once its attempts are spent.
    const t = await createTenant(api.url, { plan: 'pro' });
    const sent = await call(api.url, 'POST', '/messages', { key: t.key, body: textMessage('activity-live-1') });
    expect(sent.status).toBe(201);
    await eventually(async () => lines.some((l) => l.msg === 'worker activity' && Number(l.retried) >= 1), 60_000);
    await eventually(async () => lines.some((l) => l.msg === 'worker activity' && Number(l.failed) >= 1), 60_000);
  });
});
