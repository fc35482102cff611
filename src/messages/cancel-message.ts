// POST /messages/{id}/cancel: a message that has not left (pending or queued, a scheduled one or
// one waiting for a retry included) ends failed with CANCELLED, through the lifecycle's one path
// for messages that never left (fail-unsent.ts). A message a worker holds at that moment is being
// sent: the cancel loses to it cleanly (409, nothing changed), so no message is both sent and
// cancelled. A repeat of an accepted cancel answers the same record.
import crypto from 'node:crypto';

import type { Caller } from '../auth/caller.js';
import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { holdUnsent } from '../lifecycle/claim.js';
import { failUnsent, lockQuotaForRefund, MESSAGE_CANCELLED_ERROR } from '../lifecycle/fail-unsent.js';
import { errors } from '../shared/errors.js';
import { type MessageStatus, SEND_ERROR_CODES } from '../shared/vocab.js';
import { findMessageRow, type MessageQueries } from './message-store.js';
import type { Message } from './message-view.js';

export type MessageCancel = ReturnType<typeof createMessageCancel>;

export function createMessageCancel(deps: { db: Db; queries: Pick<MessageQueries, 'getInScope'> }) {
  const { db } = deps;
  return {
    /**
     * `id` is a messageId or the caller's externalId, looked up in the key's scope. A sandbox key
     * may cancel sandbox messages only (403 sandbox_not_supported for a live one), as a sandbox
     * key has no real effect anywhere.
     */
    async cancel(caller: Caller, id: string): Promise<Message> {
      const scope = { customerId: caller.tenant.customerId, accountId: caller.principal.scopeAccountId };
      const holder = `cancel:${crypto.randomUUID()}`;
      const messageId = await retryTransient(() =>
        db.transaction(async (tx) => {
          const found = await findMessageRow(tx, scope, id);
          if (!found) throw errors.messageNotFound();
          if (!found.sandbox && caller.principal.sandbox) throw errors.sandboxNotSupported();
          // The quota row first, as every insert locks it first (no deadlock with sends).
          await lockQuotaForRefund(tx, [scope.customerId]);
          const held = await holdUnsent(tx, scope.customerId, { messageId: found.id }, holder);
          await failUnsent(tx, holder, held, MESSAGE_CANCELLED_ERROR);
          const [now] = await tx.query<{ status: MessageStatus; code: string | null }>(
            `SELECT status, error ->> 'code' AS code FROM messages WHERE id = $1`,
            [found.id],
          );
          if (now!.status === 'failed' && now!.code === SEND_ERROR_CODES.CANCELLED) return found.id;
          throw errors.notCancellable(
            now!.status,
            now!.status === 'pending' || now!.status === 'queued'
              ? 'a worker is sending this message right now; read it again to see how the send ended'
              : `the message is ${now!.status}: only a pending or queued message can be cancelled`,
          );
        }),
      );
      return deps.queries.getInScope(scope, messageId);
    },
  };
}
