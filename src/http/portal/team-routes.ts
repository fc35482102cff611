// The Team page (owners and administrators, decision 0073): the customer's users, inviting one by a link shown once (the operator's
// invitation), changing a role, disabling (confirmed on a page; their sessions end at once) and
// enabling. Every form redirects back here (post/redirect/get) and every change is audited with
// the user's email. The customer always keeps an active owner; nobody changes or disables themself.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { Session } from '../../portal/session-service.js';
import type { Actor, TeamInvitation } from '../../portal/team-service.js';
import { PORTAL_ROLES, type PortalRole } from '../../portal/user-service.js';
import { AppError, errors } from '../../shared/errors.js';
import type { PortalDeps } from './deps.js';
import { audit, idParam, stashSecret, str, takeSecret, tenantOf } from './deps.js';
import { html, type Part } from './html.js';
import { pageQuery } from './input.js';
import { confirmPage, doneNotice, errorBox, notice, page } from './layout.js';
import { sendPage } from './reply.js';
import { type ShownInvitation, shownInvitation, teamPage } from './team-views.js';

/**
 * An email address as mail systems take it: the local part's characters (RFC 5322 atext and dots),
 * a domain of letters, digits and hyphens with at least one dot. `<script>…@x.test` is not one.
 */
const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

const DONE = {
  role: 'The role is changed.',
  disabled: 'The user is disabled: they are logged out everywhere and cannot log in.',
  enabled: 'The user is enabled: they can log in again.',
  mailed: 'The invitation is sent by email: its link sets their password.',
};

function roleOf(body: unknown): PortalRole {
  const role = str(body, 'role');
  if (!(PORTAL_ROLES as readonly string[]).includes(role))
    throw errors.validation([{ path: 'role', message: `must be one of ${PORTAL_ROLES.join(', ')}` }]);
  return role as PortalRole;
}

async function render(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, top: Part, status = 200) {
  const { session, ctx } = await tenantOf(deps, request);
  return sendPage(reply, teamPage(ctx, await deps.team.list(session.customerId), top), status);
}

/** A form's refusal, shown above the team with the status it carries (the form changed nothing). */
async function refused(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, err: unknown) {
  if (!(err instanceof AppError) || err.status === 404) throw err;
  return render(deps, request, reply, errorBox(err, { email: 'Email', role: 'Role' }), err.status);
}

async function showTeam(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  const shown = await takeSecret(deps, request, 'team.');
  const top =
    shown === 'gone'
      ? notice('This invitation link was shown once and is no longer shown here. Make a new one if it was lost.')
      : shown
        ? shownInvitation(JSON.parse(shown.value) as ShownInvitation)
        : doneNotice(pageQuery(request), DONE);
  return render(deps, request, reply, top);
}

const actorOf = (session: Session): Actor => ({ id: session.userId, role: session.role });

/** Where an invitation leads: "mailed to …" when it went by email, else the link shown once. */
async function invitedPage(deps: PortalDeps, request: FastifyRequest, inv: TeamInvitation): Promise<string> {
  if (inv.mailed) return '/portal/team?done=mailed';
  return `/portal/team?shown=${await stashLink(deps, request, inv)}`;
}

/** Keeps a new link for the one page view after the redirect. */
async function stashLink(deps: PortalDeps, request: FastifyRequest, inv: ShownInvitation): Promise<string> {
  const value: ShownInvitation = { email: inv.email, invitationUrl: inv.invitationUrl, expiresAt: inv.expiresAt };
  return stashSecret(deps, request, 'team.invitation', JSON.stringify(value));
}

function registerInvite(app: FastifyInstance, deps: PortalDeps): void {
  app.post('/team', async (request, reply) => {
    const { session } = await tenantOf(deps, request);
    try {
      const email = str(request.body, 'email').trim();
      if (email.length < 3 || email.length > 320 || !EMAIL.test(email))
        throw errors.validation([{ path: 'email', message: 'must be an email address, such as ana@example.com' }]);
      const role = roleOf(request.body);
      const invited = await deps.team.invite(session.customerId, actorOf(session), { email, role }, session.email);
      await audit(deps, request, session, 'user.invite', `${invited.email} (${role})`);
      return reply.redirect(await invitedPage(deps, request, invited), 303);
    } catch (err) {
      return refused(deps, request, reply, err);
    }
  });

  app.post('/team/:id/invitation', async (request, reply) => {
    const { session } = await tenantOf(deps, request);
    try {
      const invited = await deps.team.reinvite(session.customerId, actorOf(session), idParam(request), session.email);
      await audit(deps, request, session, 'user.invite_again', invited.email);
      return reply.redirect(await invitedPage(deps, request, invited), 303);
    } catch (err) {
      return refused(deps, request, reply, err);
    }
  });
}

function registerChanges(app: FastifyInstance, deps: PortalDeps): void {
  app.post('/team/:id/role', async (request, reply) => {
    const { session } = await tenantOf(deps, request);
    try {
      const id = idParam(request);
      const { before, after } = await deps.team.changeRole(
        session.customerId,
        actorOf(session),
        id,
        roleOf(request.body),
      );
      if (before.role !== after.role)
        await audit(deps, request, session, 'user.role_change', `${after.email}: ${before.role} → ${after.role}`);
      return reply.redirect('/portal/team?done=role', 303);
    } catch (err) {
      return refused(deps, request, reply, err);
    }
  });

  app.get('/team/:id/disable', async (request, reply) => {
    const { session, ctx } = await tenantOf(deps, request);
    const member = await deps.team.get(session.customerId, idParam(request));
    // Already disabled (Back to this page, a second tab): nothing to confirm.
    if (member.status === 'disabled')
      return sendPage(
        reply,
        page(
          ctx,
          'User already disabled',
          html`<p role="status">
              <strong>${member.email}</strong> is already disabled: they cannot log in until an owner enables them again
              on the team page.
            </p>
            <p><a href="/portal/team">Back to Team</a></p>`,
        ),
      );
    return sendPage(
      reply,
      confirmPage(
        ctx,
        'Disable a user',
        html`<p>
          Disabling <strong>${member.email}</strong> logs them out everywhere <strong>at once</strong> and keeps them
          from logging in until an owner enables them again.
        </p>`,
        `/portal/team/${member.id}/disable`,
        'Disable now',
        '/portal/team',
      ),
    );
  });

  app.post('/team/:id/disable', async (request, reply) => {
    const { session } = await tenantOf(deps, request);
    try {
      const r = await deps.team.disable(session.customerId, actorOf(session), idParam(request));
      if (r.changed) await audit(deps, request, session, 'user.disable', r.member.email);
      return reply.redirect('/portal/team?done=disabled', 303);
    } catch (err) {
      return refused(deps, request, reply, err);
    }
  });

  app.post('/team/:id/enable', async (request, reply) => {
    const { session } = await tenantOf(deps, request);
    const r = await deps.team.enable(session.customerId, actorOf(session), idParam(request));
    if (r.changed) await audit(deps, request, session, 'user.enable', r.member.email);
    return reply.redirect('/portal/team?done=enabled', 303);
  });
}

export function registerTeamRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/team', (request, reply) => showTeam(deps, request, reply));
  registerInvite(app, deps);
  registerChanges(app, deps);
}
