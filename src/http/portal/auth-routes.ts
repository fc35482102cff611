// Log in, log out (here or everywhere), and the invitation link that sets a password.
import crypto from 'node:crypto';

import type { FastifyInstance, FastifyReply } from 'fastify';

import { MIN_PASSWORD_LENGTH } from '../../portal/password.js';
import { AppError } from '../../shared/errors.js';
import type { PortalDeps } from './deps.js';
import { auditUser, str } from './deps.js';
import { html } from './html.js';
import { pageQuery } from './input.js';
import { errorBox, notice, publicPage } from './layout.js';
import { PRE_CSRF_COOKIE, sendPage } from './reply.js';

/** A fresh double-submit token for a form shown before login. */
function preToken(reply: FastifyReply, secure: boolean): string {
  const token = crypto.randomBytes(24).toString('base64url');
  void reply.setCookie(PRE_CSRF_COOKIE, token, { path: '/portal', httpOnly: true, sameSite: 'strict', secure });
  return token;
}

function loginForm(token: string, email: string, problem: unknown, info: string | null) {
  return publicPage(
    'Log in',
    html`${info ? notice(info) : ''} ${problem ? errorBox(problem) : ''}
      <form method="post" action="/portal/login" class="stack">
        <input type="hidden" name="_csrf" value="${token}" />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value="${email}" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Log in</button>
      </form>`,
  );
}

export function registerAuthRoutes(app: FastifyInstance, deps: PortalDeps, cookieName: string): void {
  const secure = deps.secureCookies;
  const cookieOptions = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure };

  app.get('/login', { config: { portalPublic: true } }, async (request, reply) => {
    if (request.portalSession) return reply.redirect('/portal', 303);
    const q = pageQuery(request);
    const info =
      q.done === 'password' ? 'Your password is set. Log in with it.' : q.done === 'out' ? 'You are logged out.' : null;
    return sendPage(reply, loginForm(preToken(reply, secure), '', null, info));
  });

  app.post('/login', { config: { portalPublic: true } }, async (request, reply) => {
    const email = str(request.body, 'email');
    try {
      const user = await deps.users.login(email, str(request.body, 'password'), request.ip);
      // A new id at every login; whatever session id the browser presented ends (no fixation).
      const session = await deps.sessions.create(user, request.portalSessionId);
      void reply.setCookie(cookieName, session.id, cookieOptions);
      void reply.clearCookie(PRE_CSRF_COOKIE, { path: '/portal' });
      await auditUser(deps, request, user, 'user.login');
      return reply.redirect('/portal', 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendPage(reply, loginForm(preToken(reply, secure), email, err, null), err.status);
    }
  });

  app.post('/logout', { config: { portalViewerMayPost: true } }, async (request, reply) => {
    if (request.portalSessionId) await deps.sessions.destroy(request.portalSessionId);
    void reply.clearCookie(cookieName, { path: '/' });
    return reply.redirect('/portal/login?done=out', 303);
  });

  app.post('/logout-everywhere', { config: { portalViewerMayPost: true } }, async (request, reply) => {
    await deps.sessions.destroyAll(request.portalSession!.userId);
    void reply.clearCookie(cookieName, { path: '/' });
    return reply.redirect('/portal/login?done=out', 303);
  });

  const invitationForm = (token: string, formToken: string, email: string, problem: unknown) =>
    publicPage(
      'Set your password',
      html`<p>Welcome, ${email}. Choose a password to activate your portal access.</p>
        ${problem ? errorBox(problem) : ''}
        <form method="post" action="/portal/invitation/${token}" class="stack">
          <input type="hidden" name="_csrf" value="${formToken}" />
          <label for="password">New password (at least ${MIN_PASSWORD_LENGTH} characters, not a common one)</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="new-password"
            minlength="${MIN_PASSWORD_LENGTH}"
            required
          />
          <button type="submit">Set password</button>
        </form>`,
    );

  app.get('/invitation/:token', { config: { portalPublic: true } }, async (request, reply) => {
    const { token } = request.params as { token: string };
    try {
      const user = await deps.users.invitation(token);
      return sendPage(reply, invitationForm(token, preToken(reply, secure), user.email, null));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendPage(reply, publicPage('Invitation', errorBox(err)), err.status);
    }
  });

  app.post('/invitation/:token', { config: { portalPublic: true } }, async (request, reply) => {
    const { token } = request.params as { token: string };
    try {
      const user = await deps.users.acceptInvitation(token, str(request.body, 'password'));
      await auditUser(deps, request, user, 'user.invitation_accept');
      return reply.redirect('/portal/login?done=password', 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.status === 404) return sendPage(reply, publicPage('Invitation', errorBox(err)), 404);
      const user = await deps.users.invitation(token);
      return sendPage(reply, invitationForm(token, preToken(reply, secure), user.email, err), err.status);
    }
  });
}
