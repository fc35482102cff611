// Two-factor sign-in (decision 0051): the account's security page (turn on with an authenticator
// app, confirm with a first code, ten recovery codes shown once, turn off with the password and a
// code) and the login's second step (a code or a recovery code, bound to the password step by a
// short-lived cookie naming a single-use challenge; no session exists before the code).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';

import { CHALLENGE_MINUTES, type TwoFactorStatus } from '../../portal/two-factor-service.js';
import { AppError } from '../../shared/errors.js';
import type { PortalDeps } from './deps.js';
import { audit, auditUser, recheckPassword, stashSecret, str, takeSecret, tenantOf } from './deps.js';
import { html, type Part } from './html.js';
import { pageQuery } from './input.js';
import { copyButton, csrfField, doneNotice, errorBox, notice, page, type PageContext, publicPage } from './layout.js';
import { PRE_CSRF_COOKIE, preToken, sendPage, setSessionCookie } from './reply.js';

/** The cookie naming the login's pending second step (only on /portal/login paths). */
export const LOGIN_STEP_COOKIE = 'chatgate_login_step';
const STEP_PATH = '/portal/login';
const SECURITY = '/portal/account/security';

/** After the right password of a user with two-factor sign-in on: the code step, no session yet. */
export async function startCodeStep(deps: PortalDeps, reply: FastifyReply, userId: string) {
  const id = await deps.twoFactor.startChallenge(userId);
  void reply.setCookie(LOGIN_STEP_COOKIE, id, {
    path: STEP_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: deps.secureCookies,
    maxAge: CHALLENGE_MINUTES * 60,
  });
  return reply.redirect('/portal/login/code', 303);
}

function codeForm(token: string, problem: unknown) {
  return publicPage(
    'Enter your code',
    html`${problem ? errorBox(problem) : ''}
      <p>
        Open your authenticator app and enter the 6-digit code it shows for ChatGate, or one of your recovery codes.
      </p>
      <form method="post" action="/portal/login/code" class="stack">
        <input type="hidden" name="_csrf" value="${token}" />
        <label for="code">Code</label>
        <input id="code" name="code" type="text" autocomplete="one-time-code" maxlength="40" required />
        <button type="submit">Verify</button>
      </form>
      <p><a href="/portal/login">Start again</a></p>`,
  );
}

const codesLeft = (n: number) => `${n} unused recovery code${n === 1 ? '' : 's'}`;

function onSection(ctx: PageContext, status: TwoFactorStatus): Part {
  return html`<p>Two-factor sign-in is <strong>on</strong>. You have ${codesLeft(status.recoveryCodesLeft)} left.</p>
    <h2>New recovery codes</h2>
    <p>Ten new codes replace all the old ones, used or not: the old ones stop working at once.</p>
    <form method="post" action="${SECURITY}/two-factor/recovery-codes" class="stack">
      ${csrfField(ctx.session)}
      <label for="codes-password">Password</label>
      <input id="codes-password" name="password" type="password" autocomplete="current-password" required />
      <button type="submit">Make new recovery codes</button>
    </form>
    <h2>Turn off two-factor sign-in</h2>
    <form method="post" action="${SECURITY}/two-factor/disable" class="stack">
      ${csrfField(ctx.session)}
      <label for="off-password">Your password</label>
      <input id="off-password" name="password" type="password" autocomplete="current-password" required />
      <label for="off-code">A code from your app, or a recovery code</label>
      <input id="off-code" name="code" type="text" autocomplete="one-time-code" maxlength="40" required />
      <button type="submit" class="danger">Turn off</button>
    </form>`;
}

/**
 * The set-up URI as a QR code for the authenticator app's camera: an SVG in a data: URL (the
 * portal's CSP allows `img-src data:`, no inline script or style), dark on white in both schemes.
 */
async function qrImage(uri: string): Promise<Part> {
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
  const src = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
  return html`<img
    id="totp-qr"
    class="qr"
    src="${src}"
    width="200"
    height="200"
    alt="QR code of the setup key for your authenticator app"
  />`;
}

function pendingSection(ctx: PageContext, pending: { secret: string; uri: string }, qr: Part): Part {
  return html`<ol>
      <li>
        Scan this QR code with your authenticator app:
        <p>${qr}</p>
        or add an account in the app with this setup key (or open the link on the device that has the app):
        <p><code id="totp-secret">${pending.secret}</code> ${copyButton('totp-secret')}</p>
        <p><a id="totp-uri" href="${pending.uri}">${pending.uri}</a></p>
      </li>
      <li>Enter the 6-digit code the app shows to turn two-factor sign-in on.</li>
    </ol>
    <form method="post" action="${SECURITY}/two-factor/confirm" class="stack">
      ${csrfField(ctx.session)}
      <label for="confirm-password">Your password</label>
      <input id="confirm-password" name="password" type="password" autocomplete="current-password" required />
      <label for="confirm-code">Code from your app</label>
      <input id="confirm-code" name="code" type="text" autocomplete="one-time-code" maxlength="40" required />
      <button type="submit">Turn on</button>
    </form>
    <form method="post" action="${SECURITY}/two-factor/start" class="inline">
      ${csrfField(ctx.session)}<button type="submit">Start again with a new key</button>
    </form>`;
}

function offSection(ctx: PageContext): Part {
  return html`<p>
      Two-factor sign-in is <strong>off</strong>. With it on, logging in takes your password and a code from an
      authenticator app on your phone.
    </p>
    <form method="post" action="${SECURITY}/two-factor/start" class="inline">
      ${csrfField(ctx.session)}<button type="submit">Set up two-factor sign-in</button>
    </form>`;
}

function codesBlock(shown: { value: string } | 'gone' | null): Part {
  if (shown === null) return '';
  if (shown === 'gone')
    return notice('The recovery codes were shown once and are gone. Make new ones below if you need them.');
  const codes = JSON.parse(shown.value) as string[];
  return html`<section class="card" aria-labelledby="codes-title">
    <h2 id="codes-title">Your recovery codes</h2>
    <p class="warn">
      Keep them somewhere safe: each one logs you in once without your phone. They are shown only now; we keep only
      their hashes.
    </p>
    <pre id="recovery-codes">${codes.join('\n')}</pre>
    <p>${copyButton('recovery-codes')}</p>
  </section>`;
}

async function securityPage(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, problem?: AppError) {
  const { session, ctx } = await tenantOf(deps, request);
  const status = await deps.twoFactor.status(session.userId);
  const pending = status.pending ? await deps.twoFactor.pending(session.userId, session.email) : null;
  const shown = problem ? null : await takeSecret(deps, request, 'recovery-codes');
  const body = html`${doneNotice(pageQuery(request), {
      on: 'Two-factor sign-in is on.',
      off: 'Two-factor sign-in is off.',
      codes: 'New recovery codes are made: the old ones no longer work.',
      // After a login with a recovery code (that code is spent): how many are left, counted now.
      recovery: `You logged in with a recovery code, which now no longer works. You have ${codesLeft(
        status.recoveryCodesLeft,
      )} left.${status.recoveryCodesLeft <= 3 ? ' Make new ones below.' : ''}`,
    })}
    ${problem ? errorBox(problem) : ''} ${codesBlock(shown)}
    <h2>Two-factor sign-in</h2>
    ${
      status.enabled
        ? onSection(ctx, status)
        : pending
          ? pendingSection(ctx, pending, await qrImage(pending.uri))
          : offSection(ctx)
    }`;
  return sendPage(reply, page(ctx, 'Security', body), problem?.status ?? 200);
}

/** A refused form of the security page: the page again with the problem. Anything else is thrown on. */
function refused(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  return (err: unknown) => {
    if (!(err instanceof AppError)) throw err;
    return securityPage(deps, request, reply, err);
  };
}

export function registerTwoFactorRoutes(app: FastifyInstance, deps: PortalDeps, cookieName: string): void {
  // Every user (viewers too) looks after their own sign-in.
  const own = { config: { portalViewerMayPost: true } };
  app.get('/account/security', async (request, reply) => securityPage(deps, request, reply));

  app.post('/account/security/two-factor/start', own, async (request, reply) => {
    const { session } = await tenantOf(deps, request);
    return deps.twoFactor
      .start(session.userId)
      .then(() => reply.redirect(SECURITY, 303), refused(deps, request, reply));
  });

  app.post('/account/security/two-factor/confirm', own, async (request, reply) => {
    const { session } = await tenantOf(deps, request);
    try {
      // The password again, as for turning it off: a stolen session must not tie the account to another phone.
      await recheckPassword(deps, request, session, 'two_factor.enable', session.email);
      const codes = await deps.twoFactor.confirm(session.userId, str(request.body, 'code'), request.ip);
      await audit(deps, request, session, 'two_factor.enable', session.email);
      const shown = await stashSecret(deps, request, 'recovery-codes', JSON.stringify(codes));
      return reply.redirect(`${SECURITY}?done=on&shown=${shown}`, 303);
    } catch (err) {
      return refused(deps, request, reply)(err);
    }
  });

  app.post('/account/security/two-factor/disable', own, async (request, reply) => {
    const { session } = await tenantOf(deps, request);
    try {
      await recheckPassword(deps, request, session, 'two_factor.disable', session.email);
      try {
        await deps.twoFactor.disable(session.userId, str(request.body, 'code'), request.ip);
      } catch (err) {
        if (err instanceof AppError && (err.status === 401 || err.status === 429))
          await audit(deps, request, session, 'two_factor.disable_failed', session.email);
        throw err;
      }
      await audit(deps, request, session, 'two_factor.disable', session.email);
      return reply.redirect(`${SECURITY}?done=off`, 303);
    } catch (err) {
      return refused(deps, request, reply)(err);
    }
  });

  app.post('/account/security/two-factor/recovery-codes', own, async (request, reply) => {
    const { session } = await tenantOf(deps, request);
    try {
      await recheckPassword(deps, request, session, 'two_factor.recovery_codes', session.email);
      const codes = await deps.twoFactor.regenerateRecoveryCodes(session.userId);
      await audit(deps, request, session, 'two_factor.recovery_codes', session.email);
      const shown = await stashSecret(deps, request, 'recovery-codes', JSON.stringify(codes));
      return reply.redirect(`${SECURITY}?done=codes&shown=${shown}`, 303);
    } catch (err) {
      return refused(deps, request, reply)(err);
    }
  });

  registerCodeStep(app, deps, cookieName);
}

function registerCodeStep(app: FastifyInstance, deps: PortalDeps, cookieName: string): void {
  const secure = deps.secureCookies;
  app.get('/login/code', { config: { portalPublic: true } }, async (request, reply) => {
    const id = request.cookies[LOGIN_STEP_COOKIE];
    if (!id || !(await deps.twoFactor.challengeUser(id))) return reply.redirect('/portal/login', 303);
    return sendPage(reply, codeForm(preToken(reply, secure), null));
  });

  app.post('/login/code', { config: { portalPublic: true } }, async (request, reply) => {
    try {
      const done = await deps.twoFactor.completeChallenge(
        request.cookies[LOGIN_STEP_COOKIE] ?? '',
        str(request.body, 'code'),
        request.ip,
      );
      const user = await deps.users.get(done.userId);
      if (user.status !== 'active') throw new AppError(401, 'login_expired', { message: 'Log in again.' });
      const session = await deps.sessions.create(user, request.portalSessionId);
      setSessionCookie(reply, cookieName, session.id, secure);
      void reply.clearCookie(LOGIN_STEP_COOKIE, { path: STEP_PATH });
      void reply.clearCookie(PRE_CSRF_COOKIE, { path: '/portal' });
      await auditUser(deps, request, user, 'user.login');
      if (done.kind === 'recovery')
        await deps.audit.record(
          { customerId: user.customerId, userId: user.id },
          'login.recovery_code',
          user.email,
          request.ip,
        );
      // A recovery code is spent: the security page says so, with how many are left.
      return reply.redirect(done.kind === 'recovery' ? `${SECURITY}?done=recovery` : '/portal', 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.code === 'login_expired') {
        void reply.clearCookie(LOGIN_STEP_COOKIE, { path: STEP_PATH });
        return sendPage(
          reply,
          publicPage(
            'Log in again',
            html`${errorBox(err)}
              <p><a href="/portal/login">Log in</a></p>`,
          ),
          401,
        );
      }
      return sendPage(reply, codeForm(preToken(reply, secure), err), err.status);
    }
  });
}
