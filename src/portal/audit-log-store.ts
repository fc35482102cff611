// The one writer of portal_audit_log (issue #34 part 1, decision 0073): entries are only ever
// added (audit-log.ts records them and reads pages of them); the customer's deletion removes them.
import type { Db } from '../db/db.js';

export async function insertAuditEntry(
  q: Pick<Db, 'query'>,
  e: {
    customerId: string;
    userId: string | null;
    actor: string | null;
    action: string;
    target: string | null;
    ip: string | null;
  },
): Promise<void> {
  await q.query(
    'INSERT INTO portal_audit_log (customer_id, user_id, actor, action, target, ip) VALUES ($1, $2, $3, $4, $5, $6)',
    [e.customerId, e.userId, e.actor, e.action, e.target, e.ip],
  );
}
