// Group commit: requests that arrive while a batch is being written wait and go together in the
// next one, so many concurrent requests share one transaction (one commit, one fsync). When idle,
// a batch starts on setImmediate: requests already read in this turn of the event loop join it,
// and a lone request waits only for that turn. (Starting at once would make 1-row batches on
// PGlite, whose queries resolve in microtasks: no socket is read while a batch is "in flight".)
//
// A batch fails only its own requests, whether its flush fails or (with `deadline`) has not settled
// in time; the next batch goes on at once. A flush past its deadline is left to finish on its own:
// its outcome is no longer anyone's (the database seam destroys the connection it ran on, so the
// deadline here is a backstop set just above the seam's own bound).
export type GroupCommit<I, O> = {
  submit(item: I): Promise<O>;
  drain(): Promise<void>;
  /**
   * How long the oldest flush still running has been (ms; 0 when none is): a stuck write path shows
   * here, also past a batch's deadline while its flush has not settled.
   */
  oldestInFlightMs(): number;
};

type Pending<I, O> = { item: I; resolve: (o: O) => void; reject: (e: unknown) => void };

export function createGroupCommit<I, O>(
  flush: (items: I[]) => Promise<O[]>,
  opts: { maxBatch: number; maxInFlight: number; deadline?: { ms: number; error: () => unknown } },
): GroupCommit<I, O> {
  let queue: Pending<I, O>[] = [];
  let inFlight = 0;
  let idle: (() => void)[] = [];
  let scheduled = false;
  const startedAt: number[] = [];

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
      let done = false;
      const settle = (outcome: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        outcome();
        release();
      };
      const deadline = opts.deadline;
      const timer = deadline
        ? setTimeout(() => settle(() => batch.forEach((p) => p.reject(deadline.error()))), deadline.ms)
        : undefined;
      const at = Date.now();
      startedAt.push(at);
      const flushed = Promise.resolve().then(() => flush(batch.map((p) => p.item)));
      void flushed.finally(() => startedAt.splice(startedAt.indexOf(at), 1)).catch(() => {});
      flushed.then(
        (results) => settle(() => batch.forEach((p, i) => p.resolve(results[i] as O))),
        (err: unknown) => settle(() => batch.forEach((p) => p.reject(err))),
      );
    }
  }

  function release() {
    inFlight--;
    schedule();
    if (inFlight === 0 && queue.length === 0) {
      const waiters = idle;
      idle = [];
      waiters.forEach((w) => w());
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
