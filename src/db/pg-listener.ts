// LISTEN for every channel of a process on one dedicated PostgreSQL connection, kept listening.
//
// A driver's own re-listening (postgres.js's `sql.listen`, before decision 0059) swallowed a failed
// attempt: the channel then stayed unlistened until the connection happened to close again, and the
// process was deaf without a word in the log. This listener owns its connection (node-postgres)
// instead, and bounds each of its statements (a miss drops the connection, as a loss would):
// - after a close it listens again, retrying with backoff until it succeeds, and logs each failure;
// - a watchdog asks the connection which channels it listens on (`pg_listening_channels()`), so a
//   loss that no close announced is found too, within one check (a small query every 10 s);
// - each time a channel is listened again, its subscribers' `onListen` runs: notifications sent
//   while it was deaf are lost, and the subscribers look for what they announced;
// - a loss told while a repair runs makes that repair look once more before it ends: on a busy
//   machine the answer to its last LISTEN and the server's goodbye are read at once, and the
//   process stayed deaf until the watchdog's next check.
import pg from 'pg';

import { DatabaseDeadlineError } from './db-errors.js';

type Log = { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

export const LISTEN_APPLICATION_NAME = 'chatgate-listen';

type Subscriber = { onPayload: (payload: string) => void; onListen?: () => void };

export type PgListener = {
  listen(channel: string, onPayload: (payload: string) => void, onListen?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
};

const quote = (channel: string) => `"${channel.replace(/"/g, '""')}"`;

/** Bounds of the listening connection (the seam's DbDeadlines): to connect, and per statement. */
type Deadlines = { connectMs: number; statementMs: number };
const DEFAULT_DEADLINES: Deadlines = { connectMs: 5_000, statementMs: 10_000 };

/**
 * The listening connection, opened at its first statement and kept for life; once lost (closed,
 * failed, or a statement past its deadline) it is destroyed, `onLost` is told, and the next
 * statement opens a new one. Statements run one after another: subscribers listen concurrently,
 * and node-postgres only queues them itself with a deprecation warning.
 */
function createListenConnection(
  url: string,
  deadlines: Deadlines,
  on: { onNotify(channel: string, payload: string): void; onLost(): void },
) {
  let conn: { client: pg.Client; ready: Promise<void> } | null = null;
  const dropped = new WeakSet<pg.Client>();
  let tail: Promise<unknown> = Promise.resolve();

  function connection(): Promise<pg.Client> {
    if (!conn) {
      const c = new pg.Client({
        connectionString: url,
        application_name: LISTEN_APPLICATION_NAME,
        connectionTimeoutMillis: deadlines.connectMs,
        keepAlive: true,
      });
      c.on('notification', (n) => on.onNotify(n.channel, n.payload ?? ''));
      const lost = () => drop(c, true);
      c.on('error', lost).on('end', lost);
      const ready = c.connect().then(
        () => {},
        (err: unknown) => {
          drop(c, false);
          throw err;
        },
      );
      conn = { client: c, ready };
    }
    const { client, ready } = conn;
    return ready.then(() => client);
  }

  /** Forgets a lost (or failed) connection and destroys it; `tell`: onLost (a loss, not a failed attempt). */
  function drop(c: pg.Client, tell: boolean) {
    if (dropped.has(c)) return;
    dropped.add(c);
    if (conn?.client === c) conn = null;
    // end() alone waits on a polite goodbye that a stalled peer never answers.
    (c as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
    void c.end().catch(() => {});
    if (tell) on.onLost();
  }

  async function runNow<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
    const c = await connection();
    let timer: NodeJS.Timeout | undefined;
    const missed = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        drop(c, false);
        reject(new DatabaseDeadlineError(deadlines.statementMs));
      }, deadlines.statementMs);
    });
    const running = c.query<T>(text);
    running.catch(() => {});
    try {
      return (await Promise.race([running, missed])).rows;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    /** One statement, after the ones before it, within the statement deadline. */
    run<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
      const p = tail.then(() => runNow<T>(text));
      tail = p.catch(() => {});
      return p;
    },
    close() {
      if (conn) drop(conn.client, false);
    },
  };
}

export function createPgListener(
  url: string,
  opts: { log?: Log; checkEveryMs?: number; deadlines?: Deadlines } = {},
): PgListener {
  const channels = new Map<string, Set<Subscriber>>();
  let closed = false;
  let repairing: Promise<void> | null = null;
  let lostWhileRepairing = false; // a loss told while a repair runs: it looks again before it ends
  const { run, close } = createListenConnection(url, opts.deadlines ?? DEFAULT_DEADLINES, {
    onNotify: (channel, payload) => channels.get(channel)?.forEach((s) => s.onPayload(payload)),
    onLost: () => void (!closed && channels.size > 0 && repair('connection closed')),
  });

  /** Listens on every subscribed channel the connection is not listening on, until that succeeds. */
  function repair(reason: string): Promise<void> {
    if (repairing) return ((lostWhileRepairing = true), repairing);
    repairing = (async () => {
      let failures = 0;
      while (!closed) {
        lostWhileRepairing = false;
        try {
          const rows = await run<{ channel: string }>('SELECT pg_listening_channels() AS channel');
          const listening = new Set(rows.map((r) => r.channel));
          const missing = [...channels.keys()].filter((c) => !listening.has(c));
          for (const c of missing) await run(`LISTEN ${quote(c)}`);
          if (missing.length > 0) {
            opts.log?.warn(
              { channels: missing, reason, failures },
              'listening again after losing the LISTEN connection',
            );
            for (const c of missing) for (const s of channels.get(c) ?? []) s.onListen?.();
          }
          if (!lostWhileRepairing) return;
        } catch (err) {
          failures++;
          if (closed) return;
          opts.log?.error({ err, reason, failures }, 'could not listen again; retrying');
          await new Promise((r) => setTimeout(r, Math.min(5_000, 100 * 2 ** Math.min(failures, 6))));
        }
      }
    })().finally(() => {
      repairing = null;
    });
    return repairing;
  }

  const watchdog = setInterval(() => {
    if (!closed && channels.size > 0 && !repairing) void repair('watchdog');
  }, opts.checkEveryMs ?? 10_000);
  watchdog.unref();

  return {
    async listen(channel, onPayload, onListen) {
      const subscriber: Subscriber = { onPayload, onListen };
      let subs = channels.get(channel);
      if (!subs) {
        subs = new Set();
        channels.set(channel, subs);
        subs.add(subscriber);
        try {
          await run(`LISTEN ${quote(channel)}`);
        } catch (err) {
          subs.delete(subscriber);
          if (subs.size === 0) channels.delete(channel);
          throw err;
        }
      } else {
        subs.add(subscriber);
      }
      onListen?.();
      return async () => {
        const current = channels.get(channel);
        if (!current?.delete(subscriber) || current.size > 0) return;
        channels.delete(channel);
        if (!closed) await run(`UNLISTEN ${quote(channel)}`).catch(() => {});
      };
    },
    async close() {
      closed = true;
      clearInterval(watchdog);
      close();
    },
  };
}
