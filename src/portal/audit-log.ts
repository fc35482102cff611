// The portal's audit log: who did what sensitive thing (reveal, create or revoke a key, rotate a
// secret, ...), always under the customer it belongs to.
import type { Db } from '../db/db.js';

export type AuditEntry = { action: string; target: string | null; email: string | null; ip: string | null; at: string };

export type AuditLog = ReturnType<typeof createAuditLog>;

export function createAuditLog(db: Db) {
  return {
    async record(
      who: { customerId: string; userId: string },
      action: string,
      target: string | null,
      ip: string | null,
    ): Promise<void> {
      await db.query(
        'INSERT INTO portal_audit_log (customer_id, user_id, action, target, ip) VALUES ($1, $2, $3, $4, $5)',
        [who.customerId, who.userId, action, target, ip],
      );
    },

    async recent(customerId: string, limit = 50): Promise<AuditEntry[]> {
      const rows = await db.query<{
        action: string;
        target: string | null;
        ip: string | null;
        at: Date;
        email: string | null;
      }>(
        `SELECT a.action, a.target, a.ip, a.at, u.email FROM portal_audit_log a
           LEFT JOIN portal_users u ON u.id = a.user_id
          WHERE a.customer_id = $1 ORDER BY a.at DESC, a.id DESC LIMIT $2`,
        [customerId, limit],
      );
      return rows.map((r) => ({
        action: r.action,
        target: r.target,
        email: r.email,
        ip: r.ip,
        at: r.at.toISOString(),
      }));
    },
  };
}
