// What a dispatcher did, told in the log: one info line per period (WORKER_ACTIVITY_LOG_MS, a
// minute by default) with the messages it sent, failed and put back for a retry in that period and
// the messages due now across the database (its backlog, shared by every worker); and one warn line
// per lease takeover, a message claimed while another worker's lease on it had expired (that
// worker died, hung or lost its database: the message's attempt may have reached the provider).
// It listens to the dispatcher's events (dispatch-events.ts), subscribed in the composition root.
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { countDue } from '../lifecycle/claim.js';
import type { DispatchHooks } from './dispatch-events.js';

export type WorkerActivity = ReturnType<typeof createWorkerActivity>;

export function createWorkerActivity(deps: {
  db: Pick<Db, 'query'>;
  log: Pick<Logger, 'info' | 'warn'>;
  workerId: () => string;
  /** The period of the activity line; 0: no line. */
  everyMs: number;
}) {
  let counts = { sent: 0, failed: 0, retried: 0 };
  let since = Date.now();
  let timer: NodeJS.Timeout | null = null;

  async function report(): Promise<void> {
    const { sent, failed, retried } = counts;
    const periodSeconds = Math.round((Date.now() - since) / 1000);
    counts = { sent: 0, failed: 0, retried: 0 };
    since = Date.now();
    let backlog: number | null = null;
    try {
      backlog = await countDue(deps.db);
    } catch {
      // The database is away: the line still says what this worker did (backlog null); the fault
      // itself is logged and counted where it was met.
    }
    deps.log.info({ worker: deps.workerId(), sent, failed, retried, backlog, periodSeconds }, 'worker activity');
  }

  return {
    /** Counts the dispatcher's sent, failed and retried messages; one warn line per lease takeover. */
    subscribe(hooks: DispatchHooks): void {
      hooks.on('sent', (e) => void (counts.sent += e.count));
      hooks.on('failed', (e) => void (counts.failed += e.count));
      hooks.on('retried', (e) => void (counts.retried += e.count));
      hooks.on('leaseTakeover', ({ message: m, workerId }) =>
        deps.log.warn(
          {
            messageId: m.id,
            customerId: m.customerId,
            accountId: m.chatAccountId,
            worker: workerId,
            previousWorker: m.previousHolder,
            attempts: m.attemptCount,
          },
          'lease takeover: claimed a message whose lease of another worker expired unfinished',
        ),
      );
    },
    /** The loop's start and stop, with the activity line's timer started after and stopped before it. */
    around(loop: { start(): Promise<void>; stop(): Promise<void> }) {
      return {
        async start(): Promise<void> {
          await loop.start();
          if (deps.everyMs <= 0 || timer) return;
          since = Date.now();
          timer = setInterval(() => void report(), deps.everyMs);
          timer.unref();
        },
        async stop(): Promise<void> {
          if (timer) clearInterval(timer);
          timer = null;
          await loop.stop();
        },
      };
    },
  };
}
