// GET /chat-accounts: the caller's accounts (a scoped key sees only its own).
import { toPublicAccount } from '../../accounts/account-view.js';
import type { Directory } from '../../auth/directory.js';
import { errors } from '../../shared/errors.js';
import type { Server } from '../server.js';
import { principalOf } from '../server.js';

export function registerChatAccountRoutes(
  app: Server,
  deps: { directory: Pick<Directory, 'tenant'>; publicBaseUrl: string },
) {
  app.get(
    '/chat-accounts',
    { schema: { summary: 'Your linked chat accounts', tags: ['chat accounts'], security: [{ apiKey: [] }] } },
    async (request) => {
      const principal = principalOf(request);
      const tenant = await deps.directory.tenant(principal.customerId);
      if (!tenant) throw errors.invalidKey();
      const visible = tenant.accounts.filter(
        (a) => principal.scopeAccountId === null || a.id === principal.scopeAccountId,
      );
      return { accounts: visible.map((a) => toPublicAccount(a, tenant.plan, deps.publicBaseUrl)) };
    },
  );
}
