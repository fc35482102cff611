// Retrying a transaction that lost a deadlock or a serialization race: safe because it rolled back.
const TRANSIENT = new Set(['40P01', '40001']);

/**
 * Runs `fn` again after a deadlock or serialization failure, up to `attempts` times in all; with
 * `backoffMs`, each retry first waits a random time up to attempt × backoffMs (so two losers of
 * the same race do not meet again at once).
 */
export async function retryTransient<T>(fn: () => Promise<T>, attempts = 3, backoffMs = 0): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !TRANSIENT.has((err as { code?: string }).code ?? '')) throw err;
      if (backoffMs > 0) await new Promise((r) => setTimeout(r, Math.random() * attempt * backoffMs));
    }
  }
}
