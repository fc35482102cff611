// GET /chat-accounts: the caller's accounts (a scoped key sees only its own).
import { toPublicAccount } from '../../accounts/account-view.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

export function registerChatAccountRoutes(app: Server, deps: { publicBaseUrl: string }) {
  app.get(
    '/chat-accounts',
    { schema: { summary: 'Your linked chat accounts', tags: ['chat accounts'], security: [{ apiKey: [] }] } },
    async (request) => {
      const { principal, tenant } = callerOf(request);
      const visible = tenant.accounts.filter(
        (a) => principal.scopeAccountId === null || a.id === principal.scopeAccountId,
      );
      return { accounts: visible.map((a) => toPublicAccount(a, tenant.plan, deps.publicBaseUrl)) };
    },
  );
}
