// The portal's audit log: who changed what under a customer — portal users (keys, webhooks, rules,
// filters, broadcasts, cancels, templates, redeliveries, logins, the team), the operator and API
// keys — with the target named in words (an endpoint's URL, a rule's name, a key's masked form, a
// user's email), never a bare id. Read newest first, a page at a time (keyset, like every list).
import type { Db } from '../db/db.js';
import { keysetPage, type PageRequest } from '../shared/keyset.js';
import { insertAuditEntry } from './audit-log-store.js';

export type AuditEntry = {
  action: string;
  target: string | null;
  /** The portal user's email, or the actor in words (`operator`, `API key ak_live_********abcd`). */
  email: string | null;
  ip: string | null;
  at: string;
};

/** Who acted: a portal user of the customer, or someone else named in words (the operator, an API key). */
export type AuditActor = { customerId: string; userId: string } | { customerId: string; actor: string };

/** Targets are words for people; a very long one (a URL, a template body's name) is cut. */
const MAX_TARGET = 500;

export type AuditLog = ReturnType<typeof createAuditLog>;

export function createAuditLog(db: Db) {
  return {
    async record(who: AuditActor, action: string, target: string | null, ip: string | null): Promise<void> {
      await insertAuditEntry(db, {
        customerId: who.customerId,
        userId: 'userId' in who ? who.userId : null,
        actor: 'actor' in who ? who.actor : null,
        action,
        target: target === null ? null : target.slice(0, MAX_TARGET),
        ip,
      });
    },

    /** One page of the customer's entries, newest first (`cursor` from the previous page's nextCursor). */
    async page(customerId: string, page: PageRequest) {
      const result = await keysetPage<{
        action: string;
        target: string | null;
        ip: string | null;
        at: Date;
        entry_id: string;
        email: string | null;
        actor: string | null;
      }>(
        db,
        {
          select: `SELECT a.action, a.target, a.ip, a.at, a.entry_id, a.actor, u.email FROM portal_audit_log a
                     LEFT JOIN portal_users u ON u.id = a.user_id`,
          where: ['a.customer_id = $1'],
          params: [customerId],
          key: { at: 'a.at', id: 'a.entry_id' },
        },
        page,
      );
      const entries: AuditEntry[] = result.rows.map((r) => ({
        action: r.action,
        target: r.target,
        email: r.email ?? r.actor,
        ip: r.ip,
        at: r.at.toISOString(),
      }));
      return { entries, nextCursor: result.nextCursor, prevCursor: result.prevCursor };
    },
  };
}
