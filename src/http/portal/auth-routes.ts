// Log in, log out (here or everywhere), and the invitation link that sets a password.
import type { FastifyInstance } from 'fastify';

import { AppError } from '../../shared/errors.js';
import type { PortalDeps } from './deps.js';
import { auditUser, str } from './deps.js';
import { html } from './html.js';
import { pageQuery } from './input.js';
import { errorBox, notice, publicPage } from './layout.js';
import { newPasswordField } from './password-field.js';
import { PRE_CSRF_COOKIE, preToken, sendPage, setSessionCookie } from './reply.js';
import { startCodeStep } from './two-factor-routes.js';

/** The login page's notice after a redirect (`?done=`). */
const LOGIN_NOTICES: Record<string, string> = {
  password: 'Your password is set. Log in with it.',
  reset: 'Your password is changed and every session of yours has ended. Log in with the new password.',
  out: 'You are logged out.',
};

function loginForm(token: string, email: string, problem: unknown, info: string | null, canReset: boolean) {
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
      </form>
      ${canReset ? html`<p><a href="/portal/password-reset">Forgot your password?</a></p>` : ''}`,
  );
}

export function registerAuthRoutes(app: FastifyInstance, deps: PortalDeps, cookieName: string): void {
  const secure = deps.secureCookies;

  app.get('/login', { config: { portalPublic: true } }, async (request, reply) => {
    if (request.portalSession) return reply.redirect('/portal', 303);
    const q = pageQuery(request);
    const info = q.done !== undefined && Object.hasOwn(LOGIN_NOTICES, q.done) ? LOGIN_NOTICES[q.done]! : null;
    return sendPage(reply, loginForm(preToken(reply, secure), '', null, info, deps.passwordResets.enabled));
  });

  app.post('/login', { config: { portalPublic: true } }, async (request, reply) => {
    const email = str(request.body, 'email');
    try {
      const user = await deps.users.login(email, str(request.body, 'password'), request.ip);
      // Two-factor sign-in on: the code step first, no session before it (decision 0051).
      if (await deps.twoFactor.isOn(user.id)) return await startCodeStep(deps, reply, user.id);
      // A new id at every login; whatever session id the browser presented ends (no fixation).
      const session = await deps.sessions.create(user, request.portalSessionId);
      setSessionCookie(reply, cookieName, session.id, secure);
      void reply.clearCookie(PRE_CSRF_COOKIE, { path: '/portal' });
      await auditUser(deps, request, user, 'user.login');
      return reply.redirect('/portal', 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const form = loginForm(preToken(reply, secure), email, err, null, deps.passwordResets.enabled);
      return sendPage(reply, form, err.status);
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
          ${newPasswordField()}
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
