// At most `total` holders at once, and at most `perKey` of them with the same key (a customer):
// one key's holders, however long they hold, always leave room for the others. Waiters are served
// in arrival order among those whose key has room. A waiter whose signal aborts leaves the queue;
// a holder's release is idempotent, so it can be tied both to the work ending and to an abort.
export type Release = () => void;

export function createFairSlots(opts: { total: number; perKey: number }) {
  let held = 0;
  const heldBy = new Map<string, number>();
  const waiting: { key: string; grant: () => void }[] = [];

  const hasRoom = (key: string) => held < opts.total && (heldBy.get(key) ?? 0) < opts.perKey;
  const take = (key: string): Release => {
    held++;
    heldBy.set(key, (heldBy.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held--;
      const left = heldBy.get(key)! - 1;
      if (left > 0) heldBy.set(key, left);
      else heldBy.delete(key);
      serve();
    };
  };
  const serve = () => {
    for (let i = 0; i < waiting.length && held < opts.total;) {
      const w = waiting[i]!;
      if (hasRoom(w.key)) {
        waiting.splice(i, 1);
        w.grant();
      } else i++;
    }
  };

  return {
    /** Resolves with the release once `key` has a place; rejects with the signal's reason on abort. */
    acquire(key: string, signal?: AbortSignal): Promise<Release> {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (hasRoom(key)) return Promise.resolve(take(key));
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          const at = waiting.indexOf(entry);
          if (at >= 0) waiting.splice(at, 1);
          reject(signal!.reason);
        };
        const entry = {
          key,
          grant: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve(take(key));
          },
        };
        waiting.push(entry);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    /** Places held and waiters, for tests and logs. */
    usage: () => ({ held, waiting: waiting.length }),
  };
}
