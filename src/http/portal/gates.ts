// The portal's one gate (issue #34 part 4, decision 0073): every signed-in route belongs to an
// area (roles.ts), declared once for its page group (pageGroup) or by the route itself
// (`config: { portalArea }`). One onRequest hook (portal-plugin.ts → checkGate) refuses a role
// that may not read (GET) or write (any other method) there, and shows the plan's gate page for
// an area whose feature the plan lacks, before any handler or body parsing runs. A signed-in route
// with no area is refused: a page added without a gate fails closed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { PLAN_LIMITS } from '../../plans/plans.js';
import { type Area, mayRead, mayWrite, type PortalRole, RIGHTS, roleName } from '../../portal/roles.js';
import type { Session } from '../../portal/session-service.js';
import type { PortalDeps } from './deps.js';
import { html, type Part } from './html.js';
import { gate, page, type PageContext } from './layout.js';
import { sendPage } from './reply.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's area (its page group's, pageGroup): whose role may read or write, which plan feature. */
    portalArea?: Area;
  }
}

/** The title and name of each plan-gated area's page, as its gate page shows them. */
const GATED: Partial<Record<Area, { title: string; what: string }>> = {
  webhooks: { title: 'Webhook endpoints', what: 'Webhooks' },
  inbox: { title: 'Inbox', what: 'The inbox' },
  'inbox-rules': { title: 'Inbox', what: 'The inbox' },
  broadcasts: { title: 'Broadcasts', what: 'Broadcasts' },
};

/**
 * A page group: every route `register` adds is in `area`, unless the route names its own
 * (`config: { portalArea }`, e.g. a settings form inside a page everyone reads).
 */
export function pageGroup(app: FastifyInstance, area: Area, register: (group: FastifyInstance) => void): void {
  void app.register(async (group) => {
    group.addHook('onRoute', (route) => {
      route.config = { portalArea: area, ...route.config };
    });
    register(group);
  });
}

/** The area of the request's route (null for a public one). */
export function areaOf(request: FastifyRequest): Area | null {
  return request.routeOptions.config?.portalArea ?? null;
}

/**
 * The gate, for a signed-in request: its role's right to the area, then the plan's feature. A
 * refused request is answered here (403; a plan gate on a GET is the gate page, 200, as before).
 */
export async function checkGate(deps: PortalDeps, session: Session, request: FastifyRequest, reply: FastifyReply) {
  const area = areaOf(request);
  const changing = request.method !== 'GET' && request.method !== 'HEAD';
  const tenant = await deps.directory.tenant(session.customerId);
  const ctx: PageContext = {
    session,
    plan: tenant?.plan ?? 'free',
    path: request.url.split('?')[0]!,
    area,
  };
  if (area === null) {
    // No route here: the not-found handler answers (404, with the way back).
    if (request.is404) return;
    return sendPage(reply, refusedPage(ctx, 'This page is not open to any role.'), 403);
  }
  if (!(changing ? mayWrite : mayRead)(session.role, area)) {
    const who = changing ? RIGHTS[area].write : RIGHTS[area].read;
    const what = changing ? 'change anything here' : 'see this page';
    // A role that may look here but not change anything gets the read-only answer, as before roles.
    const title = changing && mayRead(session.role, area) ? 'Read only' : 'Not for your role';
    return sendPage(
      reply,
      refusedPage(
        ctx,
        html`Only ${roleList(who)} of your account can ${what}; your role is
          <strong>${roleName(session.role)}</strong>.`,
        title,
      ),
      403,
    );
  }
  const feature = RIGHTS[area].feature;
  if (feature && tenant && !PLAN_LIMITS[tenant.plan][feature]) {
    const g = GATED[area]!;
    return sendPage(reply, page(ctx, g.title, gate(tenant.plan, feature, g.what)), changing ? 403 : 200);
  }
}

/** "owners, administrators and developers". */
function roleList(roles: readonly PortalRole[]): string {
  const names = roles.map((r) => `${roleName(r)}s`);
  if (names.length === 0) return 'no one';
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
}

function refusedPage(ctx: PageContext, why: Part, title = 'Not for your role') {
  return page(
    ctx,
    title,
    html`<p role="alert">${why} An owner or administrator can change your role.</p>
      <p><a href="/portal">Back to the overview</a></p>`,
  );
}
