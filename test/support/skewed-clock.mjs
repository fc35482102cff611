// Preloaded into a child process (`node --import ./test/support/skewed-clock.mjs`): its wall clock
// (Date.now(), new Date()) runs SKEWED_CLOCK_MS ahead (negative: behind) of the machine's, as a
// host whose clock is off from the database server's. Timers and the monotonic clock are left
// alone, as they are on such a host.
const skewMs = Number(process.env.SKEWED_CLOCK_MS ?? 0);
if (skewMs !== 0) {
  const RealDate = globalThis.Date;
  class SkewedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + skewMs);
      else super(...args);
    }
    static now() {
      return RealDate.now() + skewMs;
    }
  }
  globalThis.Date = SkewedDate;
}
