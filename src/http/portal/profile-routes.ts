// Your account (every user, viewers too): who you are, and changing your password — the current
// one re-checked (throttled like every re-check; a refused one audited), the new one under the same
// rules as an invitation's, every other session of yours ended. Post/redirect/get.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { AppError, errors } from '../../shared/errors.js';
import type { PortalDeps } from './deps.js';
import { audit, str, tenantOf } from './deps.js';
import { html, type Part } from './html.js';
import { pageQuery } from './input.js';
import { csrfField, doneNotice, errorBox, page } from './layout.js';
import { newPasswordField } from './password-field.js';
import { sendPage } from './reply.js';

const LABELS = { password: 'New password', current: 'Current password', repeat: 'Repeat the new password' };

async function render(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, top: Part, status = 200) {
  const { session, ctx } = await tenantOf(deps, request);
  return sendPage(
    reply,
    page(
      ctx,
      'Your account',
      html`${top}
        <p>You are <strong>${session.email}</strong>, with the role <strong>${session.role}</strong>.</p>
        <p><a href="/portal/account/security">Two-factor sign-in</a></p>
        <section aria-labelledby="change-password">
          <h2 id="change-password">Change your password</h2>
          <p>Your other sessions (other browsers and devices) are logged out; this one stays.</p>
          <form method="post" action="/portal/profile/password" class="stack">
            ${csrfField(session)}
            <label for="current">Current password</label>
            <input id="current" name="password" type="password" autocomplete="current-password" required />
            ${newPasswordField('new-password', 'newPassword')}
            <label for="repeat">Repeat the new password</label>
            <input id="repeat" name="repeat" type="password" autocomplete="new-password" required />
            <button type="submit">Change password</button>
          </form>
        </section>`,
    ),
    status,
  );
}

export function registerProfileRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/profile', (request, reply) =>
    render(deps, request, reply, doneNotice(pageQuery(request), { password: 'Your password is changed.' })),
  );

  app.post('/profile/password', { config: { portalViewerMayPost: true } }, async (request, reply) => {
    const { session } = await tenantOf(deps, request);
    const next = str(request.body, 'newPassword');
    try {
      if (next !== str(request.body, 'repeat'))
        throw errors.validation([{ path: 'repeat', message: 'is not the same as the new password' }]);
      await deps.team.changePassword(session.userId, {
        current: str(request.body, 'password'),
        next,
        address: request.ip,
        keepSession: request.portalSessionId!,
      });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.status === 401 || err.status === 429)
        await audit(deps, request, session, 'user.password_change_failed', session.email);
      const status = err.status === 401 ? 403 : err.status;
      return render(deps, request, reply, errorBox(err, LABELS), status);
    }
    await audit(deps, request, session, 'user.password_change', session.email);
    return reply.redirect('/portal/profile?done=password', 303);
  });
}
