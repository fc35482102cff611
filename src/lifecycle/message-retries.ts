// A send attempt that failed and will be tried again keeps its answer (decision 0048): the
// message's row holds only the last error, and no event is emitted for `queued`. One row per
// retry, written with the transition; a send that succeeds or fails for good writes none (its
// message.status event says it).
import type { Queryable } from '../db/db.js';
import type { SendErrorDetail } from './transitions.js';

export type Retry = {
  messageId: string;
  /** The attempt's number (attemptCount after it). */
  attempt: number;
  at: Date;
  error: SendErrorDetail | null;
  /** When the next attempt was due. */
  nextAt: Date | null;
};

export async function recordRetries(tx: Queryable, retries: Retry[]): Promise<void> {
  if (retries.length === 0) return;
  await tx.query(
    `INSERT INTO message_retries (message_id, attempt, attempted_at, error, next_attempt_at)
     SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::jsonb[], $5::timestamptz[])
     ON CONFLICT (message_id, attempt) DO NOTHING`,
    [
      retries.map((r) => r.messageId),
      retries.map((r) => r.attempt),
      retries.map((r) => r.at.toISOString()),
      retries.map((r) => (r.error ? JSON.stringify(r.error) : null)),
      retries.map((r) => r.nextAt?.toISOString() ?? null),
    ],
  );
}
