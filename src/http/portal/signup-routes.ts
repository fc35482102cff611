// Self-serve linking (decision 0076): /portal/accounts/link runs the provider's Embedded Signup
// with its JS SDK (assets/signup.js) and posts what the flow gave (the login's code, the
// session's WABA and number ids) with the PIN the owner chose to the same page, which finishes
// onboarding through the API's service. Viewers see the page but cannot post (the portal's owner
// gate); a customer the operator did not allow sees why, and no button.
import type { FastifyInstance, FastifyReply } from 'fastify';

import type { AccountRecord } from '../../accounts/account-record.js';
import type { PortalDeps } from './deps.js';
import { audit, tenantOf } from './deps.js';
import { html } from './html.js';
import { pageQuery } from './input.js';
import { csrfField, page, type PageContext } from './layout.js';
import { sendPage } from './reply.js';

/** The provider's pages that post the session's message event and host the login popup. */
const PROVIDER_ORIGINS = ['https://www.facebook.com', 'https://web.facebook.com'];

/** This page's policy: the portal's, plus the SDK's script and the provider's login frames and popup. */
function signupPolicy(reply: FastifyReply, sdkUrl: string) {
  const sdk = new URL(sdkUrl).origin;
  reply.header(
    'content-security-policy',
    [
      "default-src 'self'",
      `script-src 'self' ${sdk}`,
      "style-src 'self'",
      "img-src 'self' data:",
      `connect-src 'self' ${sdk} ${PROVIDER_ORIGINS.join(' ')}`,
      `frame-src ${sdk} ${PROVIDER_ORIGINS.join(' ')}`,
      "form-action 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "object-src 'none'",
    ].join('; '),
  );
  // The SDK's login popup talks back to this window: a strict opener policy would cut it off.
  reply.header('cross-origin-opener-policy', 'same-origin-allow-popups');
}

const field = (body: unknown, name: string) => {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v.trim() : '';
};

/** The page after a link: the account as the portal knows it now. */
function linkedPage(ctx: PageContext, linked: AccountRecord) {
  return page(
    ctx,
    'Number linked',
    html`<p role="status" id="signup-linked">
        <strong>${linked.displayName}</strong> (${linked.phoneNumber}) is linked as chat account
        <code>${linked.id}</code>.
      </p>
      <p><a href="/portal/accounts">See your chat accounts</a></p>`,
  );
}

const offPage = (ctx: PageContext) =>
  page(
    ctx,
    'Link a number',
    html`<p id="signup-off">
        Linking your own number is not available for your account. Your operator links numbers for you; ask them, or ask
        them to allow self-serve linking.
      </p>
      <p><a href="/portal/accounts">Back to the chat accounts</a></p>`,
  );

/** The form: the PIN, the button that starts the provider's flow, and the fields the flow fills. */
function signupPage(ctx: PageContext, launch: { appId: string; configId: string; sdkUrl: string }) {
  const origins = [...PROVIDER_ORIGINS, new URL(launch.sdkUrl).origin].join(' ');
  return page(
    ctx,
    'Link a number',
    html`<p>
        Link your own WhatsApp Business number: sign in with the provider, choose or create your business account and
        number, and we finish the rest (webhooks, registration). Choose the number's six-digit two-step verification PIN
        first; if the number already has one, give that one.
      </p>
      <form
        method="post"
        action="/portal/accounts/link"
        id="signup-form"
        data-app-id="${launch.appId}"
        data-config-id="${launch.configId}"
        data-sdk-url="${launch.sdkUrl}"
        data-origins="${origins}"
      >
        ${csrfField(ctx.session)}
        <label for="signup-pin">Two-step verification PIN (6 digits)</label>
        <input
          id="signup-pin"
          name="pin"
          inputmode="numeric"
          pattern="[0-9]{6}"
          maxlength="6"
          required
          autocomplete="off"
        />
        <input type="hidden" name="code" />
        <input type="hidden" name="wabaId" />
        <input type="hidden" name="phoneNumberId" />
        <input type="hidden" name="businessId" />
        <button type="button" id="signup-start" disabled>Link with WhatsApp</button>
        <p id="signup-status" role="status" aria-live="polite">
          This needs JavaScript: it opens the provider's sign-in.
        </p>
      </form>
      <script src="/portal/assets/signup.js" defer></script>`,
  );
}

/** The posted form as the service takes it, and what is wrong with it (by field). */
function readForm(b: unknown) {
  const input = {
    code: field(b, 'code'),
    wabaId: field(b, 'wabaId'),
    phoneNumberId: field(b, 'phoneNumberId'),
    pin: field(b, 'pin'),
    ...(field(b, 'businessId') ? { businessId: field(b, 'businessId') } : {}),
  };
  const problems: { path: string; message: string }[] = [];
  if (!/^\d{6}$/.test(input.pin)) problems.push({ path: 'pin', message: 'must be six digits' });
  const ok = (k: 'code' | 'wabaId' | 'phoneNumberId') =>
    k === 'code' ? input.code !== '' && input.code.length <= 2048 : /^[0-9A-Za-z_.-]{1,100}$/.test(input[k]);
  for (const k of ['code', 'wabaId', 'phoneNumberId'] as const)
    if (!ok(k)) problems.push({ path: k, message: 'is missing or malformed: run the sign-in again' });
  return { input, problems };
}

export function registerSignupRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/accounts/link', async (request, reply) => {
    const { tenant, ctx } = await tenantOf(deps, request);
    const linked = tenant.accounts.find((a) => a.id === pageQuery(request).linked);
    if (linked) return sendPage(reply, linkedPage(ctx, linked));
    const launch = await deps.embeddedSignup.launch(tenant.customerId);
    if (!launch) return sendPage(reply, offPage(ctx));
    signupPolicy(reply, launch.sdkUrl);
    return sendPage(reply, signupPage(ctx, launch));
  });

  app.post('/accounts/link', async (request, reply) => {
    const { caller, ctx, session } = await tenantOf(deps, request);
    const { input, problems } = readForm(request.body);
    if (problems.length > 0)
      return sendPage(
        reply,
        page(
          ctx,
          'Link a number',
          html`<div class="error" role="alert">
              <ul>
                ${problems.map((p) => html`<li><code>${p.path}</code> ${p.message}</li>`)}
              </ul>
            </div>
            <p><a href="/portal/accounts/link">Try again</a></p>`,
        ),
        400,
      );
    const linked = await deps.embeddedSignup.link(caller, input);
    await audit(deps, request, session, 'account.link', `${linked.phoneNumber} (embedded signup)`);
    // After the post, a GET: a reload repeats nothing (the code is spent anyway).
    return reply.redirect(`/portal/accounts/link?linked=${encodeURIComponent(linked.id)}`, 303);
  });
}
