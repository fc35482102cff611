// A deadline for one outbound request. AbortSignal.timeout gives the same signal, but its timer and
// signal live on for the whole timeout after the request has ended (one per provider call and per
// event POST: thousands at a time under load); this one is cleared when the request is done.

/** The signal aborts with a TimeoutError after `ms` (as AbortSignal.timeout's); call clear when done. */
export function deadline(ms: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    ms,
  );
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
