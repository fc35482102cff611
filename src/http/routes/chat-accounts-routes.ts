// GET /chat-accounts: the caller's accounts (a scoped key sees only its own).
import { toPublicAccount } from '../../accounts/account-view.js';
import type { MessagingLimits } from '../../accounts/messaging-limits.js';
import { visibleAccounts } from '../../auth/caller.js';
import { ChatAccountList } from '../schemas/accounts.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

export function registerChatAccountRoutes(
  app: Server,
  deps: { publicBaseUrl: string; messagingLimits: Pick<MessagingLimits, 'of'> },
) {
  app.get(
    '/chat-accounts',
    {
      schema: {
        operationId: 'listChatAccounts',
        summary: 'Your linked chat accounts',
        tags: ['chat accounts'],
        security: [{ apiKey: [] }],
        response: { 200: ChatAccountList },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const visible = visibleAccounts(caller);
      const limits = await deps.messagingLimits.of(visible);
      return {
        accounts: visible.map((a) => toPublicAccount(a, caller.tenant.plan, deps.publicBaseUrl, limits.get(a.id))),
      };
    },
  );
}
