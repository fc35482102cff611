// Group commit: requests that arrive while a batch is being written wait and go together in the
// next one, so many concurrent requests share one transaction (one commit, one fsync) while a
// lone request still goes out at once, with no timer delay.
export type GroupCommit<I, O> = { submit(item: I): Promise<O>; drain(): Promise<void> };

type Pending<I, O> = { item: I; resolve: (o: O) => void; reject: (e: unknown) => void };

export function createGroupCommit<I, O>(
  flush: (items: I[]) => Promise<O[]>,
  opts: { maxBatch: number; maxInFlight: number },
): GroupCommit<I, O> {
  let queue: Pending<I, O>[] = [];
  let inFlight = 0;
  let idle: (() => void)[] = [];

  function pump() {
    while (queue.length > 0 && inFlight < opts.maxInFlight) {
      const batch = queue.slice(0, opts.maxBatch);
      queue = queue.slice(batch.length);
      inFlight++;
      flush(batch.map((p) => p.item))
        .then(
          (results) => batch.forEach((p, i) => p.resolve(results[i] as O)),
          (err: unknown) => batch.forEach((p) => p.reject(err)),
        )
        .finally(() => {
          inFlight--;
          pump();
          if (inFlight === 0 && queue.length === 0) {
            const waiters = idle;
            idle = [];
            waiters.forEach((w) => w());
          }
        });
    }
  }

  return {
    submit(item) {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        pump();
      });
    },
    drain() {
      if (inFlight === 0 && queue.length === 0) return Promise.resolve();
      return new Promise((r) => idle.push(r));
    },
  };
}
