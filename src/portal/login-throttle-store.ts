// The one writer of portal_login_failures (issue #34 part 1, decision 0073): the attempts the
// login, re-check and reset throttles count (user-service.ts throttle), taken back or cleared.
import type { Db } from '../db/db.js';

type Q = Pick<Db, 'query'>;

/** One attempt under each subject, with the client's address and the attempt's id. */
export async function recordAttempt(q: Q, subjects: string[], address: string, attempt: string): Promise<void> {
  await q.query(`INSERT INTO portal_login_failures (subject, address, attempt) SELECT unnest($1::text[]), $2, $3`, [
    subjects,
    address,
    attempt,
  ]);
}

/** The attempt's rows, and every row of `subjects` (a success clears them). */
export async function clearAttempts(q: Q, attempt: string, subjects: string[] = []): Promise<void> {
  await q.query('DELETE FROM portal_login_failures WHERE attempt = $1 OR subject = ANY($2::text[])', [
    attempt,
    subjects,
  ]);
}

/** Rows older than the window: they count for nothing. */
export async function purgeAttempts(q: Q, windowMinutes: number): Promise<number> {
  const rows = await q.query(
    `DELETE FROM portal_login_failures WHERE at < now() - make_interval(mins => $1) RETURNING 1`,
    [windowMinutes],
  );
  return rows.length;
}
