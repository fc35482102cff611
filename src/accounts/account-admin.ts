// Chat accounts as the operator links and changes them. Provider secrets are sealed at rest
// and never leave this module in clear.
import crypto from 'node:crypto';

import { lockCustomer } from '../customers/customer-service.js';
import type { Db, Queryable } from '../db/db.js';
import { type Plan, PLAN_LIMITS } from '../plans/plans.js';
import type { ProviderClient } from '../provider/cloud-api.js';
import type { ThroughputLevel } from '../provider/phone-number.js';
import type { Sealer } from '../shared/crypto.js';
import { errors, operatorErrors } from '../shared/errors.js';
import type { AccountStatus, AccountType, SendPolicyMode } from '../shared/vocab.js';
import { judgeProbe } from './account-probe-policy.js';
import { ACCOUNT_COLUMNS, type AccountRow, toAccountRecord } from './account-record.js';
import { insertAccountRow, updateAccountColumns } from './account-store.js';
import { toOperatorAccount } from './account-view.js';
import { messagingLimitsOf, setMessagingLimit } from './portfolio-store.js';
import { resetSendPace } from './send-pace.js';
import { recordThroughputLevel, THROUGHPUT_LEVEL_MPS } from './throughput-level.js';

type SealedColumn = 'access_token_enc' | 'app_secret_enc' | 'management_token_enc';

export type OfficialInput = {
  phoneNumberId?: string;
  wabaId?: string;
  accessToken?: string;
  appSecret?: string | null;
  integrationId?: string | null;
  managementToken?: string | null;
  wabaVerification?: 'verified' | 'unverifiable' | 'unreachable';
  verifiedName?: string | null;
};

export type AccountInput = {
  type?: AccountType;
  phoneNumber?: string;
  displayName?: string;
  status?: AccountStatus;
  lastErrorCode?: string | null;
  official?: OfficialInput;
  sendPolicy?: { mode: SendPolicyMode; testRecipients?: string[] };
  throughputMps?: number;
  /** Route MARKETING templates over the Marketing Messages API (decision 0038). */
  marketingMessagesApi?: boolean;
  /** The business portfolio sharing one messaging limit (decision 0044); null: the account alone. */
  portfolioId?: string | null;
  /** The portfolio's messaging limit as the operator sets it; null: unlimited. */
  messagingLimit?: number | null;
};

export type AccountAdmin = ReturnType<typeof createAccountAdmin>;

/**
 * What a credential check (`?verify=true`) found, added to the answer: `verified` (the provider
 * read the phone number with the token), or `unverified` with the reason (the provider could not be
 * asked or did not say: unreachable, timed out, throttled, an unknown number). A rejected token is
 * not linked at all (400).
 */
export type CredentialCheck = { result: 'verified' | 'unverified'; detail: string | null };

type AccountAdminDeps = {
  db: Db;
  sealer: Sealer;
  /** Drops the customer's cached directory entry; called inside the changing transaction. */
  invalidate: (tx: Queryable, customerId: string) => Promise<void>;
  publicBaseUrl: string;
  /** Reads a phone number with a token, as the account prober does (the credential check). */
  provider: Pick<ProviderClient, 'readPhoneNumber'>;
};

type NewAccountInput = AccountInput & { type: AccountType; phoneNumber: string; displayName: string };

/** The credential check: the provider reads the phone number with the token; a rejected token is a 400. */
async function verifyToken(
  deps: Pick<AccountAdminDeps, 'provider'>,
  phoneNumberId: string,
  accessToken: string,
): Promise<CredentialCheck & { level?: ThroughputLevel }> {
  const outcome = await deps.provider.readPhoneNumber({ phoneNumberId, accessToken });
  const verdict = judgeProbe(outcome);
  // The read names the number's throughput level (decision 0042): kept with the account.
  const level = outcome.ok ? (outcome.throughputLevel ?? undefined) : undefined;
  if (verdict === 'accepted') return { result: 'verified', detail: null, ...(level ? { level } : {}) };
  const detail = outcome.ok ? null : outcome.summary;
  if (verdict === 'rejected')
    throw errors.validation([
      {
        path: 'official.accessToken',
        message: `the provider rejected this access token for phone number id ${phoneNumberId} (${detail ?? 'token refused'}); check the token, or link the account without verify=true`,
      },
    ]);
  return { result: 'unverified', detail: detail ?? 'the provider gave no answer' };
}
const seal = (sealer: Sealer, v: string | null | undefined, id: string, column: SealedColumn) =>
  v === undefined ? undefined : v === null ? null : sealer.seal(v, { table: 'chat_accounts', column, id });

async function view(tx: Queryable, publicBaseUrl: string, id: string) {
  const rows = await tx.query<AccountRow & { plan: Plan }>(
    `SELECT ${ACCOUNT_COLUMNS}, (SELECT plan FROM customers c WHERE c.id = a.customer_id) AS plan
       FROM chat_accounts a WHERE id = $1`,
    [id],
  );
  const r = rows[0]!;
  const limits = await messagingLimitsOf(tx, [id]);
  return toOperatorAccount(toAccountRecord(r), r.plan, publicBaseUrl, limits.get(id));
}

function uniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === '23505';
}

/** Links an account: the plan's account limit holds (the customer row is locked). */
async function insertAccount(
  deps: AccountAdminDeps,
  customerId: string,
  input: NewAccountInput,
  level?: ThroughputLevel,
  /** Arm the account prober at once (a token not yet checked). */
  probe = false,
) {
  const { db, sealer, invalidate, publicBaseUrl } = deps;
  try {
    return await db.transaction(async (tx) => {
      const plan = (await lockCustomer(tx, customerId))?.plan;
      if (!plan) throw errors.notFound('customer');
      const [{ n } = { n: 0 }] = await tx.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM chat_accounts WHERE customer_id = $1',
        [customerId],
      );
      const limit = PLAN_LIMITS[plan].accounts;
      if (n >= limit) throw errors.limitReached(`chat accounts on plan ${plan}`, limit);
      const id = crypto.randomUUID();
      const o = input.official ?? {};
      const status = input.status ?? 'CONNECTED';
      await insertAccountRow(tx, [
        id,
        customerId,
        input.type,
        status,
        input.phoneNumber,
        input.displayName,
        o.phoneNumberId ?? null,
        o.wabaId ?? null,
        seal(sealer, o.accessToken, id, 'access_token_enc') ?? null,
        seal(sealer, o.appSecret, id, 'app_secret_enc') ?? null,
        o.integrationId ?? null,
        seal(sealer, o.managementToken, id, 'management_token_enc') ?? null,
        input.type === 'OFFICIAL' ? (o.wabaVerification ?? 'unverifiable') : null,
        o.verifiedName ?? null,
        input.type === 'OFFICIAL' ? (input.sendPolicy?.mode ?? 'PRODUCTION') : null,
        input.sendPolicy?.testRecipients ?? [],
        // The operator's rate, else the level the credential check read, else the provider's default.
        input.throughputMps ?? (level ? THROUGHPUT_LEVEL_MPS[level] : 80),
        input.marketingMessagesApi ?? false,
        input.portfolioId ?? null,
        level ?? null,
        probe,
      ]);
      if (input.messagingLimit !== undefined) await setMessagingLimit(tx, [id], input.messagingLimit, 'operator');
      await invalidate(tx, customerId);
      return view(tx, publicBaseUrl, id);
    });
  } catch (err) {
    if (uniqueViolation(err)) throw operatorErrors.alreadyExists('an account with this phoneNumberId');
    throw err;
  }
}

/** Changes the fields given, and resets the account prober. */
async function changeAccount(deps: AccountAdminDeps, id: string, input: AccountInput) {
  const { db, sealer, invalidate, publicBaseUrl } = deps;
  try {
    return await db.transaction(async (tx) => {
      const rows = await tx.query<{ customer_id: string; type: AccountType }>(
        'SELECT customer_id, type FROM chat_accounts WHERE id = $1 FOR UPDATE',
        [id],
      );
      const current = rows[0];
      if (!current) throw errors.notFound('chat account');
      const type = input.type ?? current.type;
      if (type === 'DIRECT' && (input.official !== undefined || input.sendPolicy !== undefined)) {
        throw errors.validation([
          { path: input.official ? 'official' : 'sendPolicy', message: 'applies to OFFICIAL accounts only' },
        ]);
      }
      const o = input.official ?? {};
      // Each column changes only when its field was given; $n::boolean flags say "given".
      const sets: string[] = [];
      const params: unknown[] = [id];
      const set = (column: string, value: unknown) => {
        if (value === undefined) return;
        params.push(value);
        sets.push(`${column} = $${params.length}`);
      };
      set('type', input.type);
      set('status', input.status);
      // connectedAt: when the account was last set CONNECTED.
      if (input.status === 'CONNECTED')
        sets.push("connected_at = CASE WHEN status = 'CONNECTED' THEN COALESCE(connected_at, now()) ELSE now() END");
      set('phone_number', input.phoneNumber);
      set('display_name', input.displayName);
      set('last_error_code', input.lastErrorCode);
      set('phone_number_id', o.phoneNumberId);
      set('waba_id', o.wabaId);
      set('access_token_enc', seal(sealer, o.accessToken, id, 'access_token_enc'));
      set('app_secret_enc', seal(sealer, o.appSecret, id, 'app_secret_enc'));
      set('integration_id', o.integrationId);
      set('management_token_enc', seal(sealer, o.managementToken, id, 'management_token_enc'));
      // A new (or removed) credential has not been proven by any management call yet.
      if (o.managementToken !== undefined) sets.push('template_management_verified_at = NULL');
      set('waba_verification', o.wabaVerification);
      set('verified_name', o.verifiedName);
      set('send_policy_mode', input.sendPolicy?.mode);
      set('test_recipients', input.sendPolicy?.testRecipients);
      set('throughput_mps', input.throughputMps);
      set('marketing_messages_api', input.marketingMessagesApi);
      set('portfolio_id', input.portfolioId);
      // Switched on again: the API is tried at once (a refusal learned before is forgotten).
      if (input.marketingMessagesApi === true) sets.push('marketing_messages_refused_until = NULL');
      // An edit resets the account prober: one that sets the status decides for it (no probe);
      // any other edit of an account being probed makes its next probe due now, from attempt 0
      // (a new token is verified within a poll).
      if (sets.length > 0)
        sets.push(
          input.status !== undefined
            ? 'probe_next_at = NULL'
            : 'probe_next_at = CASE WHEN probe_next_at IS NULL THEN NULL ELSE now() END',
          'probe_attempts = 0',
        );
      if (sets.length > 0) {
        await updateAccountColumns(tx, sets, params);
      }
      // After the portfolio moved, so the limit is the new portfolio's.
      if (input.messagingLimit !== undefined) await setMessagingLimit(tx, [id], input.messagingLimit, 'operator');
      // A new ceiling starts at full pace (decision 0055): the fraction learned was of the old one.
      if (input.throughputMps !== undefined) await resetSendPace(tx, id);
      await invalidate(tx, current.customer_id);
      return view(tx, publicBaseUrl, id);
    });
  } catch (err) {
    if (uniqueViolation(err)) throw operatorErrors.alreadyExists('an account with this phoneNumberId');
    throw err;
  }
}

export function createAccountAdmin(deps: AccountAdminDeps) {
  const { db } = deps;

  const api = {
    async create(customerId: string, input: NewAccountInput, opts: { verify?: boolean } = {}) {
      if (input.type === 'OFFICIAL') {
        const o = input.official;
        const missing = (['phoneNumberId', 'wabaId', 'accessToken'] as const).filter((k) => !o?.[k]);
        if (missing.length > 0)
          throw errors.validation(
            missing.map((k) => ({ path: `official.${k}`, message: 'is required for an OFFICIAL account' })),
          );
      } else if (input.official !== undefined || input.sendPolicy !== undefined) {
        throw errors.validation([
          { path: input.official ? 'official' : 'sendPolicy', message: 'applies to OFFICIAL accounts only' },
        ]);
      }
      const check =
        opts.verify && input.type === 'OFFICIAL'
          ? await verifyToken(deps, input.official!.phoneNumberId!, input.official!.accessToken!)
          : undefined;
      const { level, ...credentialCheck } = check ?? {};
      // A token the provider could not be asked about is never CONNECTED: the account waits as
      // AUTHENTICATING, and the account prober connects it once the provider accepts the token
      // (decision 0072). A status the operator chose other than CONNECTED is kept.
      const unverified = check?.result === 'unverified' && (input.status ?? 'CONNECTED') === 'CONNECTED';
      const created = await insertAccount(
        deps,
        customerId,
        unverified ? { ...input, status: 'AUTHENTICATING' } : input,
        level,
        unverified,
      );
      return check ? { ...created, credentialCheck } : created;
    },

    insert: (customerId: string, input: NewAccountInput) => insertAccount(deps, customerId, input),

    async update(id: string, input: AccountInput, opts: { verify?: boolean } = {}) {
      const token = input.official?.accessToken;
      if (!opts.verify || token === undefined) return api.change(id, input);
      // A new token is checked against the phone number id the account will have.
      const [current] = await db.query<{ phone_number_id: string | null }>(
        'SELECT phone_number_id FROM chat_accounts WHERE id = $1',
        [id],
      );
      if (!current) throw errors.notFound();
      const phoneNumberId = input.official?.phoneNumberId ?? current.phone_number_id;
      const { level, ...credentialCheck } =
        (phoneNumberId ? await verifyToken(deps, phoneNumberId, token) : null) ?? {};
      // A level read follows as after a maintenance pause (decision 0042), unless this edit sets the rate.
      if (level && input.throughputMps === undefined) await recordThroughputLevel(db, id, level);
      const changed = await api.change(id, input);
      return phoneNumberId ? { ...changed, credentialCheck } : changed;
    },

    change: (id: string, input: AccountInput) => changeAccount(deps, id, input),
  };
  return api;
}
