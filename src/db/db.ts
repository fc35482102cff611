// The database seam: everything above it is the same code on PGlite and PostgreSQL.
export type Row = Record<string, unknown>;

export interface Queryable {
  /** One parameterised statement; returns its rows. */
  query<T = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Several statements without parameters (migrations). */
  exec(text: string): Promise<void>;
  /**
   * In a transaction of `Db.transaction`: NOTIFY on `channel` once this transaction has committed,
   * coalesced with the other commits of this process (see notifyAfterCommit).
   */
  notifyAfterCommit?(channel: string): void;
  /** In a transaction of `Db.transaction`: runs `fn` once it has committed (never after a rollback). */
  afterCommit?(fn: () => void): void;
  /** The process-local bag of the Db this runs on (see `Db.context`). */
  context?: Map<symbol, unknown>;
}

/**
 * What the seam can tell cheaply about its connections: the pool's size (1 for PGlite), and the
 * statements and transactions in flight through it. Neither driver exposes its own queue, so
 * `waiting` is the work in flight beyond the pool's size (postgres.js pipelines or queues it).
 */
export type DbStats = { size: number; inUse: number; waiting: number };

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * A bag of this process's parts that work on this database, shared by every wrapper of it and
   * given to its transactions (`Queryable.context`): e.g. the deliverer that takes a delivery at
   * its insert (events/local-delivery.ts).
   */
  readonly context: Map<symbol, unknown>;
  stats(): DbStats;
  /**
   * `deadlineMs`: this transaction's own bound, instead of the configured one (PostgreSQL), for the
   * rare long one (migrations); its statements then have no per-statement bound either.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, opts?: { deadlineMs?: number }): Promise<T>;
  /**
   * Subscribes to NOTIFY on a channel; the returned function unsubscribes. `onListen` runs each
   * time the subscription is (re)established: notifications sent while it was down are lost.
   */
  listen(channel: string, onPayload: (payload: string) => void, onListen?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** NOTIFY inside the caller's transaction: delivered only if it commits. */
export async function notify(q: Queryable, channel: string, payload = ''): Promise<void> {
  await q.query('SELECT pg_notify($1, $2)', [channel, payload]);
}

/**
 * NOTIFY after the caller's transaction commits, coalesced: a NOTIFY in a transaction takes one
 * cluster-wide lock through its commit, so every notifying commit waits for the others. Instead
 * the channel is notified by a statement of its own after the commit, at once when it has not
 * been for `NOTIFY_GAP_MS`, else once at the end of that gap for every commit meanwhile: a
 * listener is woken at most NOTIFY_GAP_MS later, never before the change is visible. Outside a
 * `Db.transaction` (or on a Queryable without the hook) it notifies in the caller's statement
 * stream, as `notify` does. Lost only if the process dies between the commit and the NOTIFY:
 * workers also poll.
 */
export async function notifyAfterCommit(q: Queryable, channel: string): Promise<void> {
  if (q.notifyAfterCommit) q.notifyAfterCommit(channel);
  else await notify(q, channel);
}

export const NOTIFY_GAP_MS = 10;

/**
 * Runs a transaction's after-commit callbacks; one that throws is logged to stderr and does not
 * stop the others (the commit has happened, the caller's answer stands).
 */
export function runAfterCommit(fns: (() => void)[]): void {
  for (const fn of fns)
    try {
      fn();
    } catch (err) {
      console.error('an after-commit callback failed', err);
    }
}

/** One process's coalesced NOTIFYs: at most one per channel per gap, sent by `send`. */
export function createNotifyCoalescer(send: (channel: string) => Promise<unknown>, gapMs = NOTIFY_GAP_MS) {
  const channels = new Map<string, { lastAt: number; timer: NodeJS.Timeout | null }>();
  let closed = false;
  const fire = (channel: string) => {
    const c = channels.get(channel)!;
    c.timer = null;
    c.lastAt = Date.now();
    // A failed NOTIFY only delays the listener until its next poll.
    if (!closed) void send(channel).catch(() => {});
  };
  return {
    ping(channel: string) {
      const c = channels.get(channel) ?? { lastAt: 0, timer: null };
      channels.set(channel, c);
      if (c.timer !== null || closed) return;
      const wait = c.lastAt + gapMs - Date.now();
      if (wait <= 0) fire(channel);
      else c.timer = setTimeout(() => fire(channel), wait);
    },
    close() {
      closed = true;
      for (const c of channels.values()) if (c.timer) clearTimeout(c.timer);
    },
  };
}

/** Counts operations in flight through a driver (top-level statements and whole transactions). */
export function createInFlightCounter(size: number) {
  let active = 0;
  return {
    async track<T>(run: () => Promise<T>): Promise<T> {
      active++;
      try {
        return await run();
      } finally {
        active--;
      }
    },
    stats: (): DbStats => ({ size, inUse: Math.min(active, size), waiting: Math.max(0, active - size) }),
  };
}
