// Group commit: requests that arrive while a batch is being written wait and go together in the
// next one, so many concurrent requests share one transaction (one commit, one fsync). When idle,
// a batch starts on setImmediate: requests already read in this turn of the event loop join it,
// and a lone request waits only for that turn. (Starting at once would make 1-row batches on
// PGlite, whose queries resolve in microtasks: no socket is read while a batch is "in flight".)
export type GroupCommit<I, O> = {
  submit(item: I): Promise<O>;
  drain(): Promise<void>;
  /** How long the oldest batch now being written has been in flight (ms; 0 when none is): a stuck write path shows here. */
  oldestInFlightMs(): number;
};

type Pending<I, O> = { item: I; resolve: (o: O) => void; reject: (e: unknown) => void };

export function createGroupCommit<I, O>(
  flush: (items: I[]) => Promise<O[]>,
  opts: { maxBatch: number; maxInFlight: number },
): GroupCommit<I, O> {
  let queue: Pending<I, O>[] = [];
  let inFlight = 0;
  /** Start times (Date.now) of the batches in flight, oldest first. */
  const startedAt: number[] = [];
  let idle: (() => void)[] = [];
  let scheduled = false;

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      pump();
    });
  }

  function pump() {
    while (queue.length > 0 && inFlight < opts.maxInFlight) {
      const batch = queue.slice(0, opts.maxBatch);
      queue = queue.slice(batch.length);
      inFlight++;
      const at = Date.now();
      startedAt.push(at);
      flush(batch.map((p) => p.item))
        .then(
          (results) => batch.forEach((p, i) => p.resolve(results[i] as O)),
          (err: unknown) => batch.forEach((p) => p.reject(err)),
        )
        .finally(() => {
          inFlight--;
          startedAt.splice(startedAt.indexOf(at), 1);
          schedule();
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
        schedule();
      });
    },
    drain() {
      if (inFlight === 0 && queue.length === 0) return Promise.resolve();
      return new Promise((r) => idle.push(r));
    },
    oldestInFlightMs() {
      return startedAt.length === 0 ? 0 : Date.now() - startedAt[0]!;
    },
  };
}
