// "Last used" of API keys: written at most once a minute per key and process, off the request's
// path, so authentication stays free of writes.
import type { Db } from '../db/db.js';
import { touchKey } from './key-store.js';

const EVERY_MS = 60_000;

export function createKeyUsage(deps: { db: Db; onError: (err: unknown) => void }) {
  const lastWrite = new Map<string, number>();
  const pending = new Set<Promise<unknown>>();
  return {
    touch(keyId: string): void {
      const now = Date.now();
      if (now - (lastWrite.get(keyId) ?? 0) < EVERY_MS) return;
      if (lastWrite.size > 100_000) lastWrite.clear();
      lastWrite.set(keyId, now);
      const p = touchKey(deps.db, keyId)
        .catch(deps.onError)
        .finally(() => pending.delete(p));
      pending.add(p);
    },
    /** Waits for the writes in flight (before the database closes). */
    async drain(): Promise<void> {
      await Promise.all([...pending]);
    },
  };
}
