// Self-serve linking with the provider's Embedded Signup (issue #35 item 3, decision 0076). The
// customer runs the provider's flow in the browser (its JS SDK, v4: the login's `code` and the
// session's WABA and phone number ids); the page posts them here, and we finish onboarding as the
// provider's "Onboarding business customers as a Tech Provider" asks, server to server: exchange
// the code for a business token, subscribe our app to the WABA's webhooks, register the number
// with the customer's PIN, read the number, then link the account as the operator would
// (AccountAdmin.insert: the plan's account limit, secrets sealed). The operator turns it off per
// plan (EMBEDDED_SIGNUP_PLANS) or per customer (`embeddedSignup`).
import type { AccountAdmin } from '../accounts/account-admin.js';
import { type Caller, requireLive, requireUnscoped } from '../auth/caller.js';
import type { Db } from '../db/db.js';
import { type Plan, PLAN_LIMITS } from '../plans/plans.js';
import type { ManagementOutcome, ProviderClient } from '../provider/cloud-api.js';
import { AppError, errors, operatorErrors } from '../shared/errors.js';

export type EmbeddedSignupSettings = {
  /** The provider app's id (EMBEDDED_SIGNUP_APP_ID); null: self-serve linking is off everywhere. */
  appId: string | null;
  /** The Facebook Login for Business configuration of the flow (EMBEDDED_SIGNUP_CONFIG_ID). */
  configId: string | null;
  /** The app's secret (PROVIDER_APP_SECRET): the code exchange needs it. */
  appSecret: string | null;
  /** The provider's JS SDK (EMBEDDED_SIGNUP_SDK_URL). */
  sdkUrl: string;
  /** The plans on which customers may link their own numbers (EMBEDDED_SIGNUP_PLANS). */
  plans: readonly Plan[];
};

/** What the browser got from the flow: the login's code and the session's ids (the SDK's message event). */
export type SignupInput = { code: string; wabaId: string; phoneNumberId: string; pin: string; businessId?: string };

type Step = 'exchange_code' | 'subscribe_app' | 'register_number' | 'read_number';

/** A provider step refused or failed: 422 `signup_failed` with the step, nothing linked. */
type Failed = Pick<Extract<ManagementOutcome, { ok: false }>, 'httpStatus' | 'detail' | 'transport'>;

function stepFailed(step: Step, outcome: Failed, secrets: string[]): AppError {
  let message = outcome.detail?.message ?? (outcome.transport ? `provider ${outcome.transport} failure` : null);
  for (const s of secrets) if (message && s.length >= 4) message = message.split(s).join('[redacted]');
  return new AppError(422, 'signup_failed', {
    step,
    message: `the provider did not complete ${step.replace('_', ' ')}: ${message ?? `HTTP ${outcome.httpStatus}`}`,
    provider: { httpStatus: outcome.httpStatus, code: outcome.detail?.code ?? null },
  });
}

const answerWithout = (field: string): Failed => ({
  httpStatus: 200,
  transport: null,
  detail: { code: null, subcode: null, message: `the answer had no ${field}`, fbtraceId: null },
});

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);

/**
 * The provider's onboarding steps for a Tech Provider, in order (docs/provider-protocol-2026.md,
 * "Embedded Signup"): the business token, the number's digits and its verified name.
 */
async function onboard(
  provider: Pick<ProviderClient, 'manage'>,
  settings: EmbeddedSignupSettings,
  input: SignupInput,
): Promise<{ token: string; digits: string; verifiedName: string | null }> {
  const secrets = [input.code, input.pin, settings.appSecret!];
  // 1. The code (valid for a short time, once) for a business integration system user token.
  const exchanged = await provider.manage({
    method: 'GET',
    path: ['oauth', 'access_token'],
    query: { client_id: settings.appId!, client_secret: settings.appSecret!, code: input.code },
    token: `${settings.appId!}|${settings.appSecret!}`,
  });
  if (!exchanged.ok) throw stepFailed('exchange_code', exchanged, secrets);
  const token = str((exchanged.body as { access_token?: unknown } | null)?.access_token);
  if (token === null) throw stepFailed('exchange_code', answerWithout('access_token'), secrets);
  secrets.push(token);
  // 2. Our app subscribed to the WABA's webhooks (messages, statuses, account updates).
  const subscribed = await provider.manage({ method: 'POST', path: [input.wabaId, 'subscribed_apps'], token });
  if (!subscribed.ok) throw stepFailed('subscribe_app', subscribed, secrets);
  // 3. The number registered for Cloud API, with the customer's two-step verification PIN.
  const registered = await provider.manage({
    method: 'POST',
    path: [input.phoneNumberId, 'register'],
    body: { messaging_product: 'whatsapp', pin: input.pin },
    token,
  });
  if (!registered.ok) throw stepFailed('register_number', registered, secrets);
  // 4. The number as the provider shows it: our account's phone number and name.
  const read = await provider.manage({
    method: 'GET',
    path: [input.phoneNumberId],
    query: { fields: 'display_phone_number,verified_name' },
    token,
  });
  if (!read.ok) throw stepFailed('read_number', read, secrets);
  const number = read.body as { display_phone_number?: unknown; verified_name?: unknown } | null;
  const digits = (str(number?.display_phone_number) ?? '').replace(/\D/g, '');
  const verifiedName = str(number?.verified_name);
  if (digits.length < 8) throw stepFailed('read_number', answerWithout('display_phone_number'), secrets);
  return { token, digits, verifiedName };
}

export type EmbeddedSignup = ReturnType<typeof createEmbeddedSignup>;

export function createEmbeddedSignup(deps: {
  db: Db;
  provider: Pick<ProviderClient, 'manage'>;
  accounts: Pick<AccountAdmin, 'insert'>;
  settings: EmbeddedSignupSettings;
}) {
  const { db, provider, settings } = deps;
  const configured = settings.appId !== null && settings.configId !== null && settings.appSecret !== null;

  /** Whether this customer may link a number itself: configured, then its own setting, else its plan's. */
  async function allowed(customerId: string): Promise<{ allowed: boolean; plan: Plan }> {
    const [row] = await db.query<{ plan: Plan; embedded_signup: boolean | null }>(
      'SELECT plan, embedded_signup FROM customers WHERE id = $1',
      [customerId],
    );
    if (!row) throw errors.notFound('customer');
    const byCustomer = row.embedded_signup;
    return {
      plan: row.plan,
      allowed: configured && (byCustomer ?? settings.plans.includes(row.plan)),
    };
  }

  /**
   * Refuses before any provider step what the link would refuse after them: the plan's account
   * limit and a number already linked (the link checks both again, under its lock).
   */
  async function checkRoom(customerId: string, plan: Plan, phoneNumberId: string): Promise<void> {
    const [row] = await db.query<{ n: number; taken: boolean }>(
      `SELECT (SELECT count(*)::int FROM chat_accounts WHERE customer_id = $1) AS n,
              EXISTS (SELECT 1 FROM chat_accounts WHERE phone_number_id = $2) AS taken`,
      [customerId, phoneNumberId],
    );
    const limit = PLAN_LIMITS[plan].accounts;
    if ((row?.n ?? 0) >= limit) throw errors.limitReached(`chat accounts on plan ${plan}`, limit);
    if (row?.taken) throw operatorErrors.alreadyExists('an account with this phoneNumberId');
  }

  return {
    configured,
    allowed,

    /** What the page needs to start the flow (null when this customer may not). */
    async launch(customerId: string) {
      const a = await allowed(customerId);
      return a.allowed ? { appId: settings.appId!, configId: settings.configId!, sdkUrl: settings.sdkUrl } : null;
    },

    /**
     * Finishes the flow: the provider's onboarding steps, then the account linked. A live key of the
     * whole customer (or a portal owner): a sandbox key or one scoped to an account may not.
     */
    async link(caller: Caller, input: SignupInput) {
      requireLive(caller);
      requireUnscoped(caller);
      const customerId = caller.tenant.customerId;
      const a = await allowed(customerId);
      if (!a.allowed) throw errors.featureNotAvailable(a.plan);
      await checkRoom(customerId, a.plan, input.phoneNumberId);
      const { token, digits, verifiedName } = await onboard(provider, settings, input);
      return deps.accounts.insert(customerId, {
        type: 'OFFICIAL',
        phoneNumber: `+${digits}`,
        displayName: (verifiedName ?? `+${digits}`).slice(0, 200),
        official: {
          phoneNumberId: input.phoneNumberId,
          wabaId: input.wabaId,
          // The business token sends and manages templates (it has both scopes).
          accessToken: token,
          managementToken: token,
          verifiedName,
          wabaVerification: 'verified',
        },
      });
    },
  };
}
