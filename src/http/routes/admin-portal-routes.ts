// The operator's side of the portal: portal users of a customer, their invitation links
// (shown once, in these answers), password resets and disabling, each in the customer's audit log.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

import type { AuditLog } from '../../portal/audit-log.js';
import { PORTAL_ROLES, type UserService } from '../../portal/user-service.js';
import { Uuid } from '../../shared/schemas.js';
import type { OperatorAuth } from '../operator-auth.js';
import { PortalUser, PortalUserInvited, PortalUserList } from '../schemas/operator.js';
import type { Server } from '../server.js';

const IdParam = Type.Object({ id: Uuid() });

type Deps = { operatorAuth: OperatorAuth; users: UserService; audit: AuditLog };

/** Every change the operator makes to a customer's team is in that customer's audit log. */
async function recorded<T extends { customerId: string; email: string }>(
  deps: Deps,
  request: FastifyRequest,
  action: string,
  user: T,
  detail = '',
): Promise<T> {
  await deps.audit.record(
    { customerId: user.customerId, actor: 'operator' },
    action,
    `${user.email}${detail}`,
    request.ip,
  );
  return user;
}

export function registerAdminPortalRoutes(app: Server, deps: Deps) {
  app.addHook('onRequest', deps.operatorAuth);
  const tags = ['operator'];
  const security = [{ operator: [] }];

  app.post(
    '/admin/customers/:id/users',
    {
      schema: {
        tags,
        security,
        operationId: 'createPortalUser',
        summary: 'Create a portal user; the answer carries their one-time invitation link',
        response: { 201: PortalUserInvited },
        'x-errors': ['not_found', 'already_exists'],
        'x-examples': { viewer: { summary: 'Invite a viewer', value: { email: 'ops@example.com', role: 'viewer' } } },
        params: IdParam,
        body: Type.Object(
          {
            email: Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$' }),
            role: Type.Optional(Type.Union(PORTAL_ROLES.map((r) => Type.Literal(r)))),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const role = request.body.role ?? 'owner';
      const user = await deps.users.create(request.params.id, { email: request.body.email, role });
      return reply.code(201).send(await recorded(deps, request, 'user.invite', user, ` (${role})`));
    },
  );

  app.get(
    '/admin/customers/:id/users',
    {
      schema: {
        tags,
        security,
        operationId: 'listPortalUsers',
        summary: "A customer's portal users",
        params: IdParam,
        response: { 200: PortalUserList },
        'x-errors': ['not_found'],
      },
    },
    async (request) => ({ users: await deps.users.list(request.params.id) }),
  );

  app.post(
    '/admin/portal-users/:id/reset-password',
    {
      schema: {
        tags,
        security,
        operationId: 'resetPortalUserPassword',
        summary: 'End the password, every session and two-factor sign-in; the answer carries a new invitation link',
        response: { 200: PortalUserInvited },
        'x-errors': ['not_found'],
        params: IdParam,
      },
    },
    async (request) =>
      recorded(deps, request, 'user.password_reset', await deps.users.resetPassword(request.params.id)),
  );

  app.post(
    '/admin/portal-users/:id/disable',
    {
      schema: {
        tags,
        security,
        operationId: 'disablePortalUser',
        summary: 'Disable a portal user; their sessions end at once',
        params: IdParam,
        response: { 200: PortalUser },
        'x-errors': ['not_found'],
      },
    },
    async (request) => recorded(deps, request, 'user.disable', await deps.users.disable(request.params.id)),
  );
}
