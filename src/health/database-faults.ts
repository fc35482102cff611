// Database faults as this process sees them: every error from the Db seam (API requests, portal
// pages, worker passes, the purger, readiness itself) that db/db-errors.ts names a fault (the
// database, its disk or the way to it cannot do the work now). Each is counted (a metric, by
// reason), logged once per period per reason with the number seen since the last line (an outage
// at 1,000 requests a second must not write 1,000 lines a second), and remembered for readiness:
// /readyz answers 503 while a fault was seen within the window, and 200 again by itself once
// none has been for that long (the writes go through again).
import type { Logger } from 'pino';

import type { Db, Queryable } from '../db/db.js';
import { databaseFault, type DatabaseFaultReason } from '../db/db-errors.js';

/** A fault seen within the window: its reason, how many, and how long ago the last one was. */
export type RecentFault = { reason: DatabaseFaultReason; count: number; lastSeenMsAgo: number };

export type DatabaseFaults = {
  /** Counts, logs (rate-limited) and remembers `err` if it is a database fault; returns its reason, or null. */
  report(err: unknown): DatabaseFaultReason | null;
  /** The reasons seen within the window, most recent first (empty: no fault lately). */
  recent(): RecentFault[];
};

/** Readiness stays 503 this long after the last fault: a probe period or two, so it does not flap. */
export const FAULT_WINDOW_MS = 10_000;
/** At most one log line per reason this often. */
export const FAULT_LOG_PERIOD_MS = 60_000;

export function createDatabaseFaults(deps: {
  log: Pick<Logger, 'warn'>;
  /** Counts one fault (the metric). */
  count?: (reason: DatabaseFaultReason) => void;
  windowMs?: number;
  logPeriodMs?: number;
  now?: () => number;
}): DatabaseFaults {
  const windowMs = deps.windowMs ?? FAULT_WINDOW_MS;
  const logPeriodMs = deps.logPeriodMs ?? FAULT_LOG_PERIOD_MS;
  const now = deps.now ?? Date.now;
  /** Per reason: the last fault, the faults within the window, and those not logged yet. */
  const byReason = new Map<
    DatabaseFaultReason,
    { lastAt: number; windowStart: number; inWindow: number; loggedAt: number; unlogged: number }
  >();
  // One error may pass several reporters on its way out (the seam, then the HTTP edge): counted once.
  const seen = new WeakSet<object>();

  return {
    report(err) {
      const reason = databaseFault(err);
      if (reason === null) return null;
      if (typeof err === 'object' && err !== null) {
        if (seen.has(err)) return reason;
        seen.add(err);
      }
      deps.count?.(reason);
      const at = now();
      let r = byReason.get(reason);
      if (!r) {
        r = { lastAt: at, windowStart: at, inWindow: 0, loggedAt: -Infinity, unlogged: 0 };
        byReason.set(reason, r);
      }
      if (at - r.lastAt > windowMs) {
        r.windowStart = at;
        r.inWindow = 0;
      }
      r.lastAt = at;
      r.inWindow++;
      r.unlogged++;
      if (at - r.loggedAt >= logPeriodMs) {
        deps.log.warn(
          { err, reason, faults: r.unlogged, logPeriodSeconds: logPeriodMs / 1000 },
          `database fault (${reason}): requests answer 503 database_unavailable and workers retry; logged once per ${logPeriodMs / 1000} s`,
        );
        r.loggedAt = at;
        r.unlogged = 0;
      }
      return reason;
    },
    recent() {
      const at = now();
      return [...byReason.entries()]
        .filter(([, r]) => at - r.lastAt <= windowMs)
        .sort(([, a], [, b]) => b.lastAt - a.lastAt)
        .map(([reason, r]) => ({ reason, count: r.inWindow, lastSeenMsAgo: at - r.lastAt }));
    },
  };
}

/**
 * The Db seam with every fault that comes out of it reported: one place that sees the API's, the
 * portal's and every worker's database calls (a statement inside a transaction surfaces through
 * the transaction). Anything the seam gains later passes through unchanged.
 */
export function watchDb(db: Db, faults: Pick<DatabaseFaults, 'report'>): Db {
  const reported = <T>(p: Promise<T>): Promise<T> =>
    p.catch((err: unknown) => {
      faults.report(err);
      throw err;
    });
  return {
    ...db,
    query: <T>(text: string, params?: readonly unknown[]) => reported(db.query<T>(text, params)),
    exec: (text: string) => reported(db.exec(text)),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => reported(db.transaction(fn)),
    listen: (channel, onPayload, onListen) => reported(db.listen(channel, onPayload, onListen)),
  };
}
