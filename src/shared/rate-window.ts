// A fixed-window counter per key, in this process's memory: at most `limit` actions per key per
// window. For cheap per-user throttles of interactive actions (the portal's rule check), where a
// restart forgetting the counts costs nothing; the login throttle is kept in the database instead.

export type RateWindow = ReturnType<typeof createRateWindow>;

export function createRateWindow(opts: { limit: number; windowMs: number; maxKeys?: number; now?: () => number }) {
  const now = opts.now ?? Date.now;
  const maxKeys = opts.maxKeys ?? 10_000;
  const windows = new Map<string, { start: number; n: number }>();
  return {
    /** Counts one action for the key: null when allowed, else the seconds until the window ends. */
    take(key: string): number | null {
      const t = now();
      let w = windows.get(key);
      if (!w || t - w.start >= opts.windowMs) {
        windows.delete(key);
        if (windows.size >= maxKeys) windows.delete(windows.keys().next().value!);
        w = { start: t, n: 0 };
        windows.set(key, w);
      }
      if (w.n >= opts.limit) return Math.max(1, Math.ceil((w.start + opts.windowMs - t) / 1000));
      w.n++;
      return null;
    },
  };
}
