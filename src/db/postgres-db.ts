// PostgreSQL server driver (postgres.js): a pool of connections, pipelined statements,
// LISTEN on a dedicated connection that listens again by itself (pg-listener.ts).
import postgres from 'postgres';

import { createInFlightCounter, createNotifyCoalescer, type Db, type Queryable } from './db.js';
import { createPgListener, type PgListener } from './pg-listener.js';

type Sql = postgres.Sql | postgres.TransactionSql;

const NEEDS_ESCAPE = /[\\"]/;

/**
 * JS arrays go over the wire as PostgreSQL array literals (text). The client would otherwise
 * infer the element type (a boolean[] arrives as boolean); every array parameter in our SQL
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

// JSON goes as text too, cast in SQL ($1::text::jsonb): a string sent for a jsonb parameter would
// otherwise be encoded a second time.
const toWire = (params: readonly unknown[]) => params.map((p) => (Array.isArray(p) ? arrayLiteral(p) : p));

function wrap(sql: Sql): Queryable {
  return {
    async query<T>(text: string, params?: readonly unknown[]) {
      const rows = await sql.unsafe(text, toWire(params ?? []) as postgres.ParameterOrJSON<never>[], { prepare: true });
      return rows as unknown as T[];
    },
    async exec(text: string) {
      await sql.unsafe(text);
    },
  };
}

export async function openPostgresDb(
  url: string,
  poolSize: number,
  opts: { log?: NonNullable<Parameters<typeof createPgListener>[1]>['log'] } = {},
): Promise<Db> {
  const sql = postgres(url, {
    max: poolSize,
    onnotice: () => {},
    connection: { application_name: 'chatgate' },
  });
  await sql`SELECT 1`; // fail fast at start-up when the server is unreachable
  const base = wrap(sql);
  const inFlight = createInFlightCounter(poolSize);
  let listener: PgListener | null = null; // opened at the first listen: a CLI command never listens
  const notifier = createNotifyCoalescer((channel) => base.query('SELECT pg_notify($1, $2)', [channel, '']));
  return {
    kind: 'postgres',
    query: (text, params) => inFlight.track(() => base.query(text, params)),
    exec: (text) => inFlight.track(() => base.exec(text)),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const channels = new Set<string>();
      const result = await inFlight.track(
        () => sql.begin((tx) => fn({ ...wrap(tx), notifyAfterCommit: (c) => void channels.add(c) })) as Promise<T>,
      );
      for (const c of channels) notifier.ping(c);
      return result;
    },
    stats: inFlight.stats,
    listen(channel, onPayload, onListen) {
      listener ??= createPgListener(url, opts);
      return listener.listen(channel, onPayload, onListen);
    },
    async close() {
      notifier.close();
      await listener?.close();
      await sql.end({ timeout: 5 });
    },
  };
}
