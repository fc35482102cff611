// The messaging limit as the customer's reads show it (GET /chat-accounts, the portal's accounts
// page): each account's portfolio limit and use (decision 0044).
import type { Db } from '../db/db.js';
import { messagingLimitsOf, type MessagingLimitView } from './portfolio-store.js';

export type MessagingLimits = ReturnType<typeof createMessagingLimits>;

export function createMessagingLimits(deps: { db: Pick<Db, 'query'> }) {
  return {
    /** Each OFFICIAL account's limit and use, by account id (one statement; none for no account). */
    of(accounts: { id: string; type: string }[]): Promise<Map<string, MessagingLimitView>> {
      return messagingLimitsOf(
        deps.db,
        accounts.filter((a) => a.type === 'OFFICIAL').map((a) => a.id),
      );
    },
  };
}
