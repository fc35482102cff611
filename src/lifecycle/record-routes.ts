// The route a send took (decision 0038), recorded on its own for a send whose transition found
// the row moved on (its receipt was applied first: dispatch/outcomes.ts); the transitions record
// it otherwise.
import type { Queryable } from '../db/db.js';

/** Marks these messages as sent over the Marketing Messages API. */
export async function recordMarketingRoutes(tx: Queryable, ids: string[]): Promise<void> {
  await tx.query(`UPDATE messages SET provider_route = 'marketing_messages' WHERE id = ANY($1::uuid[])`, [ids]);
}
