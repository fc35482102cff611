// Retrying a transaction that lost a deadlock or a serialization race: safe because it rolled back.
const TRANSIENT = new Set(['40P01', '40001']);

export async function retryTransient<T>(fn: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !TRANSIENT.has((err as { code?: string }).code ?? '')) throw err;
    }
  }
}
