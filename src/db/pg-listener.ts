// LISTEN for every channel of a process on one dedicated PostgreSQL connection, kept listening.
//
// postgres.js's own `sql.listen` listens again after the connection closes, but swallows a failed
// attempt (an empty catch): the channel then stays unlistened until the connection happens to
// close again, and the process is deaf without a word in the log. This listener owns that
// connection instead:
// - after a close it listens again, retrying with backoff until it succeeds, and logs each failure;
// - a watchdog asks the connection which channels it listens on (`pg_listening_channels()`), so a
//   loss that no close announced is found too, within one check (a small query every 10 s);
// - each time a channel is listened again, its subscribers' `onListen` runs: notifications sent
//   while it was deaf are lost, and the subscribers look for what they announced.
import postgres from 'postgres';

type Log = { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

export const LISTEN_APPLICATION_NAME = 'chatgate-listen';

type Subscriber = { onPayload: (payload: string) => void; onListen?: () => void };

export type PgListener = {
  listen(channel: string, onPayload: (payload: string) => void, onListen?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
};

const quote = (channel: string) => `"${channel.replace(/"/g, '""')}"`;

/** One connection, kept for life (no idle or lifetime limit), that reports notifications and closes. */
function connect(url: string, on: { onNotify(channel: string, payload: string): void; onClose(): void }) {
  // `onnotify` is a connection option of postgres.js that its types leave out.
  const options: postgres.Options<Record<string, never>> & { onnotify(channel: string, payload: string): void } = {
    max: 1,
    max_lifetime: null,
    fetch_types: false,
    onnotice: () => {},
    connection: { application_name: LISTEN_APPLICATION_NAME },
    onnotify: on.onNotify,
    onclose: on.onClose,
  };
  return postgres(url, options);
}

export function createPgListener(url: string, opts: { log?: Log; checkEveryMs?: number } = {}): PgListener {
  const channels = new Map<string, Set<Subscriber>>();
  let closed = false;
  let repairing: Promise<void> | null = null;
  const sql = connect(url, {
    onNotify(channel, payload) {
      for (const s of channels.get(channel) ?? []) s.onPayload(payload);
    },
    onClose() {
      if (!closed && channels.size > 0) void repair('connection closed');
    },
  });

  /** Listens on every subscribed channel the connection is not listening on, until that succeeds. */
  function repair(reason: string): Promise<void> {
    repairing ??= (async () => {
      let failures = 0;
      while (!closed) {
        try {
          const rows = await sql.unsafe<{ channel: string }[]>('SELECT pg_listening_channels() AS channel');
          const listening = new Set(rows.map((r) => r.channel));
          const missing = [...channels.keys()].filter((c) => !listening.has(c));
          for (const c of missing) await sql.unsafe(`LISTEN ${quote(c)}`);
          if (missing.length > 0) {
            opts.log?.warn(
              { channels: missing, reason, failures },
              'listening again after losing the LISTEN connection',
            );
            for (const c of missing) for (const s of channels.get(c) ?? []) s.onListen?.();
          }
          return;
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
          await sql.unsafe(`LISTEN ${quote(channel)}`);
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
        if (!closed) await sql.unsafe(`UNLISTEN ${quote(channel)}`).catch(() => {});
      };
    },
    async close() {
      closed = true;
      clearInterval(watchdog);
      await sql.end({ timeout: 5 });
    },
  };
}
