// A cancelled broadcast's messages are failed through the lifecycle's one path for messages that
// never left (src/lifecycle/fail-unsent.ts): by the cancel itself for those no worker holds, and by
// a worker for those it claims later (it asks findCancelled).
import type { Queryable } from '../db/db.js';

/** The cancelled ones among these broadcasts (for a worker that claimed their messages). */
export async function findCancelled(
  q: Queryable,
  broadcastIds: string[],
): Promise<Map<string, { customerId: string; createdAt: Date }>> {
  if (broadcastIds.length === 0) return new Map();
  const rows = await q.query<{ id: string; customer_id: string; created_at: Date }>(
    'SELECT id, customer_id, created_at FROM broadcasts WHERE id = ANY($1::uuid[]) AND cancelled_at IS NOT NULL',
    [broadcastIds],
  );
  return new Map(rows.map((r) => [r.id, { customerId: r.customer_id, createdAt: r.created_at }]));
}
