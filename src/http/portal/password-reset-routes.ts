// Password reset by email (decision 0051): the "forgot password" form (answered the same whether
// or not the address has an account), and the emailed link's form that sets a new password, ends
// every session of the user and is audited. Without SMTP_URL every route here says it is off.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { RESET_MINUTES, resetErrors } from '../../portal/password-reset-service.js';
import { AppError } from '../../shared/errors.js';
import type { PortalDeps } from './deps.js';
import { str } from './deps.js';
import { html } from './html.js';
import { pageQuery } from './input.js';
import { errorBox, notice, publicPage } from './layout.js';
import { newPasswordField } from './password-field.js';
import { preToken, sendPage } from './reply.js';

const TITLE = 'Reset your password';

function requestForm(token: string, problem: unknown, sent: boolean) {
  return publicPage(
    TITLE,
    html`${
        sent
          ? notice(
              `If an account with that email exists, we sent it a link to choose a new password. The link works once, for ${RESET_MINUTES} minutes.`,
            )
          : ''
      }
      ${problem ? errorBox(problem) : ''}
      <form method="post" action="/portal/password-reset" class="stack">
        <input type="hidden" name="_csrf" value="${token}" />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" maxlength="320" required />
        <button type="submit">Send me a link</button>
      </form>
      <p><a href="/portal/login">Back to log in</a></p>`,
  );
}

function newPasswordForm(link: string, token: string, email: string, problem: unknown) {
  return publicPage(
    'Choose a new password',
    html`<p>Choose a new password for ${email}. Every session of this account ends when you save it.</p>
      ${problem ? errorBox(problem, { password: 'New password' }) : ''}
      <form method="post" action="/portal/password-reset/${link}" class="stack">
        <input type="hidden" name="_csrf" value="${token}" />
        ${newPasswordField()}
        <button type="submit">Save the new password</button>
      </form>`,
  );
}

function offPage(reply: FastifyReply, err: AppError = resetErrors.notConfigured()) {
  return sendPage(
    reply,
    publicPage(
      TITLE,
      html`${errorBox(err)}
        <p><a href="/portal/login">Back to log in</a></p>`,
    ),
    err.status,
  );
}

/** The background half of a reset request: links made and mailed, each audited; failures logged. */
async function mailLinks(deps: PortalDeps, request: FastifyRequest, email: string): Promise<void> {
  try {
    for (const user of await deps.passwordResets.mailLinks(email))
      await deps.audit.record(
        { customerId: user.customerId, userId: user.id },
        'password.reset_requested',
        user.email,
        request.ip,
      );
  } catch (err) {
    request.log.error({ err }, 'portal: password reset links not made');
  }
}

const linkOf = (request: FastifyRequest) => (request.params as { token: string }).token;

export function registerPasswordResetRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const secure = deps.secureCookies;
  const resets = deps.passwordResets;
  const open = { config: { portalPublic: true } };

  app.get('/password-reset', open, async (request, reply) => {
    if (!resets.enabled) return offPage(reply);
    return sendPage(reply, requestForm(preToken(reply, secure), null, pageQuery(request).done === 'sent'));
  });

  app.post('/password-reset', open, async (request, reply) => {
    if (!resets.enabled) return offPage(reply);
    try {
      const email = await resets.request(str(request.body, 'email'), request.ip);
      // The links are made, audited and mailed once the answer is out: nothing the answer waits
      // for depends on whether the address has an account (decision 0056).
      reply.raw.once('close', () => void mailLinks(deps, request, email));
      return reply.redirect('/portal/password-reset?done=sent', 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendPage(reply, requestForm(preToken(reply, secure), err, false), err.status);
    }
  });

  app.get('/password-reset/:token', open, async (request, reply) => {
    if (!resets.enabled) return offPage(reply);
    try {
      const user = await resets.check(linkOf(request));
      return sendPage(reply, newPasswordForm(linkOf(request), preToken(reply, secure), user.email, null));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return offPage(reply, err);
    }
  });

  app.post('/password-reset/:token', open, async (request, reply) => {
    if (!resets.enabled) return offPage(reply);
    const link = linkOf(request);
    try {
      const user = await resets.reset(link, str(request.body, 'password'));
      await deps.audit.record(
        { customerId: user.customerId, userId: user.id },
        'password.reset',
        user.email,
        request.ip,
      );
      // The browser's own session (if any) ended with every other one.
      return reply.redirect('/portal/login?done=reset', 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.status === 404) return offPage(reply, err);
      const user = await resets.check(link).catch(() => null);
      if (!user) return offPage(reply, resetErrors.linkInvalid());
      return sendPage(reply, newPasswordForm(link, preToken(reply, secure), user.email, err), err.status);
    }
  });
}
