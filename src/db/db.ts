// The database seam: everything above it is the same code on PGlite and PostgreSQL.
export type Row = Record<string, unknown>;

export interface Queryable {
  /** One parameterised statement; returns its rows. */
  query<T = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Several statements without parameters (migrations). */
  exec(text: string): Promise<void>;
}

/**
 * What the seam can tell cheaply about its connections: the pool's size (1 for PGlite), and the
 * statements and transactions in flight through it. Neither driver exposes its own queue, so
 * `waiting` is the work in flight beyond the pool's size (postgres.js pipelines or queues it).
 */
export type DbStats = { size: number; inUse: number; waiting: number };

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  stats(): DbStats;
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
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
