// The database seam: everything above it is the same code on PGlite and PostgreSQL.
export type Row = Record<string, unknown>;

export interface Queryable {
  /** One parameterised statement; returns its rows. */
  query<T = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Several statements without parameters (migrations). */
  exec(text: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
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
