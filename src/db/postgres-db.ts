// PostgreSQL server driver (node-postgres, decision 0059): a pool of connections, every call under
// a deadline, LISTEN on a dedicated connection that listens again by itself (pg-listener.ts).
//
// Deadlines: a statement outside a transaction, or a whole transaction, that has not settled by
// its deadline is answered DatabaseDeadlineError, and the connection it ran on is destroyed:
// whether the work ran is unknown, and a late answer would land on the next user. A connection that
// reports a fault (reset, closed, the server's own timeouts: databaseFault) is destroyed too; an
// ordinary SQL error (a constraint, a syntax error) leaves it in the pool. The server enforces the
// same bounds on its side (statement_timeout, idle_in_transaction_session_timeout), so a statement
// or transaction whose client is gone does not hold its locks on.
import pg from 'pg';

import { createInFlightCounter, createNotifyCoalescer, type Db, type Queryable, runAfterCommit } from './db.js';
import { DatabaseDeadlineError, databaseFault } from './db-errors.js';
import { createPgListener, type PgListener } from './pg-listener.js';

/** The bounds of every database call (DATABASE_*_TIMEOUT_MS, docs/configuration.md). */
export type DbDeadlines = {
  /** A statement outside a transaction; the server's statement_timeout for every statement. */
  statementMs: number;
  /** A whole transaction, BEGIN to COMMIT; the server's idle_in_transaction_session_timeout. */
  transactionMs: number;
  /** Getting a connection: from the pool, or opening one (the pool's wait counts). */
  connectMs: number;
};

export const DEFAULT_DEADLINES: DbDeadlines = { statementMs: 10_000, transactionMs: 15_000, connectMs: 5_000 };

/**
 * The client's deadline for a statement outside a transaction is the server's statement_timeout
 * plus this: a statement that is merely slow is cancelled by the server first (its connection
 * still answers), and only a connection that stopped answering is given up by the client.
 */
const CLIENT_GRACE_MS = 500;

const NEEDS_ESCAPE = /[\\"]/;

/**
 * JS arrays go over the wire as PostgreSQL array literals (text). Every array parameter in our SQL
 * carries an explicit cast such as $1::uuid[], so text is always the right input.
 */
function arrayLiteral(values: readonly unknown[]): string {
  const items = values.map((v) => {
    if (v === null || v === undefined) return 'NULL';
    if (typeof v === 'boolean') return v ? 't' : 'f';
    if (typeof v === 'number') return String(v);
    const text = String(v);
    // Most items (ids, timestamps) need no escape: the test is cheaper than the replace.
    return NEEDS_ESCAPE.test(text) ? `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"` : `"${text}"`;
  });
  return `{${items.join(',')}}`;
}

// JSON goes as text too, cast in SQL ($1::text::jsonb).
const toWire = (params: readonly unknown[]) =>
  params.map((p) => (Array.isArray(p) ? arrayLiteral(p) : p instanceof Date ? p.toISOString() : p));

// date and timestamp (without time zone) parsed as the previous driver (postgres.js) did: as UTC
// by `new Date(text)`, not in the process's local time zone as node-postgres would.
const parseDate = (text: string) => new Date(text);
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 1082 || oid === 1114) return parseDate;
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * Statements are prepared once per connection by name, as the previous driver did (`prepare`):
 * the server parses and plans each text once. Names are per text for the process's life; the SQL
 * is hand-written, so the set is small, and past the cap a new text simply runs unnamed.
 */
const names = new Map<string, string>();
const MAX_NAMED = 5_000;
function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `chatgate_${names.size}`;
    names.set(text, name);
  }
  return name;
}

/**
 * One connection's statements, one after another: code in a transaction may issue several at once
 * (Promise.all), which node-postgres only queues itself with a deprecation warning.
 */
function wrap(client: pg.PoolClient): Queryable {
  let tail: Promise<unknown> = Promise.resolve();
  const next = <R>(run: () => Promise<R>): Promise<R> => {
    const p = tail.then(run);
    tail = p.catch(() => {});
    return p;
  };
  return {
    async query<T>(text: string, params?: readonly unknown[]) {
      const values = toWire(params ?? []);
      const res = await next(() => client.query({ text, values, name: statementName(text), types }));
      return res.rows as T[];
    },
    async exec(text: string) {
      await next(() => client.query(text));
    },
  };
}

/** A connection that missed a deadline or reported a fault: closed now, never reused. */
function destroy(client: pg.PoolClient, err: Error) {
  client.release(err);
  // release(err) ends the connection politely (Terminate, then FIN), which a stalled peer may
  // never see: the socket is destroyed at once instead. node-postgres has no public call for it.
  (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
}

/** Runs `work` on a connection of the pool within `deadlineMs`; see the header for what is destroyed. */
async function onConnection<T>(
  pool: pg.Pool,
  deadlineMs: number,
  work: (client: pg.PoolClient, broken: () => void, rolledBack: () => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let timer: NodeJS.Timeout | undefined;
  const missed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseDeadlineError(deadlineMs)), deadlineMs);
  });
  let isBroken = false;
  // A transaction that failed in the caller's code and rolled back cleanly left a healthy connection.
  let isRolledBack = false;
  const running = work(
    client,
    () => (isBroken = true),
    () => (isRolledBack = true),
  );
  running.catch(() => {}); // after a missed deadline it fails on the destroyed connection: seen by nobody
  try {
    const result = await Promise.race([running, missed]);
    client.release();
    return result;
  } catch (err) {
    const suspect = err instanceof DatabaseDeadlineError || databaseFault(err) !== null || !isServerError(err);
    if (isBroken || (suspect && !isRolledBack)) destroy(client, err as Error);
    else client.release();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** An error the server sent (it has a SQLSTATE): the connection itself is fine. */
const isServerError = (err: unknown) => err instanceof pg.DatabaseError;

export type PostgresDbOptions = {
  log?: NonNullable<Parameters<typeof createPgListener>[1]>['log'];
  deadlines?: DbDeadlines;
};

export async function openPostgresDb(url: string, poolSize: number, opts: PostgresDbOptions = {}): Promise<Db> {
  const deadlines = opts.deadlines ?? DEFAULT_DEADLINES;
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    application_name: 'chatgate',
    connectionTimeoutMillis: deadlines.connectMs,
    statement_timeout: deadlines.statementMs,
    idle_in_transaction_session_timeout: deadlines.transactionMs,
    // No JIT compilation: every statement here is short, and a plan whose row guess is large
    // (the usage rollup's, benchmarks.md §25) paid hundreds of ms of server CPU to compile it.
    options: '-c jit=off',
    keepAlive: true,
  });
  // An idle connection that fails is dropped by the pool; one that fails while in use reports it to
  // the query running on it. Without a listener either would be an uncaught 'error' event.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const statementDeadline = deadlines.statementMs + CLIENT_GRACE_MS;
  const run = <T>(work: (q: Queryable) => Promise<T>, deadlineMs = statementDeadline) =>
    onConnection(pool, deadlineMs, (client) => work(wrap(client)));
  await run((q) => q.query('SELECT 1')); // fail fast at start-up when the server is unreachable
  const inFlight = createInFlightCounter(poolSize);
  let listener: PgListener | null = null; // opened at the first listen: a CLI command never listens
  const notifier = createNotifyCoalescer((channel) => run((q) => q.query('SELECT pg_notify($1, $2)', [channel, ''])));
  const context = new Map<symbol, unknown>();
  return {
    kind: 'postgres',
    context,
    query: (text, params) => inFlight.track(() => run((q) => q.query(text, params))),
    exec: (text) => inFlight.track(() => run((q) => q.exec(text))),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>, txOpts?: { deadlineMs?: number }) {
      const channels = new Set<string>();
      const after: (() => void)[] = [];
      const result = await inFlight.track(() =>
        onConnection(pool, txOpts?.deadlineMs ?? deadlines.transactionMs, async (client, broken, rolledBack) => {
          const tx = wrap(client);
          await tx.exec('BEGIN');
          // A longer transaction (migrations) lifts the server's per-statement bound for itself.
          if (txOpts?.deadlineMs !== undefined) await tx.exec('SET LOCAL statement_timeout = 0');
          let result: T;
          try {
            result = await fn({
              ...tx,
              context,
              notifyAfterCommit: (c) => void channels.add(c),
              afterCommit: (f) => void after.push(f),
            });
          } catch (err) {
            // A broken connection is destroyed by onConnection; a healthy one is rolled back here,
            // and destroyed if even that fails. The caller sees its own error either way.
            if (databaseFault(err) === null) await tx.exec('ROLLBACK').then(rolledBack, broken);
            throw err;
          }
          await tx.exec('COMMIT');
          return result;
        }),
      );
      for (const c of channels) notifier.ping(c);
      runAfterCommit(after);
      return result;
    },
    stats: inFlight.stats,
    listen(channel, onPayload, onListen) {
      listener ??= createPgListener(url, { log: opts.log, deadlines });
      return listener.listen(channel, onPayload, onListen);
    },
    async close() {
      notifier.close();
      await listener?.close();
      await pool.end();
    },
  };
}
