// The chat account as the rest of the service sees it (secrets stay sealed until a sender needs them).
import type { Sealer } from '../shared/crypto.js';
import type { AccountStatus, AccountType, SendPolicyMode } from '../shared/vocab.js';
import { currentPaceSql } from './send-pace.js';

export type AccountRecord = {
  id: string;
  customerId: string;
  type: AccountType;
  status: AccountStatus;
  phoneNumber: string;
  displayName: string;
  connectedAt: Date | null;
  lastErrorCode: string | null;
  phoneNumberId: string | null;
  wabaId: string | null;
  integrationId: string | null;
  hasManagementToken: boolean;
  /** When a template management call with the current management credential last succeeded. */
  templateManagementVerifiedAt: Date | null;
  wabaVerification: string | null;
  verifiedName: string | null;
  sendPolicyMode: SendPolicyMode | null;
  testRecipients: string[];
  throughputMps: number;
  /**
   * The fraction of throughputMps the account sends at now: below 1 for a while after the provider
   * refused the number's throughput (130429; decision 0055), 1 otherwise.
   */
  sendPace: number;
  /** Send MARKETING templates over the provider's Marketing Messages API (decision 0038; off by default). */
  marketingMessagesApi: boolean;
  /** Until when the provider is taken to refuse that API for this account (131055: not onboarded); null: not refused. */
  marketingMessagesRefusedUntil: Date | null;
  /** The account prober's state (decision 0009): when the next probe is due, null when not probed. */
  probeNextAt: Date | null;
  /** Probes in a row that did not get the token accepted since the account was marked. */
  probeAttempts: number;
  createdAt: Date;
};

/**
 * The account's columns, and its send pace from its pacing row (the subquery's bare `id` is the
 * account's: account_pacing has no column of that name, so it works with or without an alias).
 */
export const ACCOUNT_COLUMNS = `id, customer_id, type, status, phone_number, display_name, connected_at, last_error_code,
  phone_number_id, waba_id, integration_id, management_token_enc IS NOT NULL AS has_management_token,
  template_management_verified_at, waba_verification, verified_name, send_policy_mode, test_recipients, throughput_mps, marketing_messages_api, marketing_messages_refused_until, probe_next_at, probe_attempts, created_at,
  coalesce((SELECT ${currentPaceSql('ap')} FROM account_pacing ap WHERE ap.account_id = id), 1) AS send_pace`;

/** A row of ACCOUNT_COLUMNS as the database returns it. */
export type AccountRow = {
  id: string;
  customer_id: string;
  type: AccountType;
  status: AccountStatus;
  phone_number: string;
  display_name: string;
  connected_at: Date | null;
  last_error_code: string | null;
  phone_number_id: string | null;
  waba_id: string | null;
  integration_id: string | null;
  has_management_token: boolean;
  template_management_verified_at: Date | null;
  waba_verification: string | null;
  verified_name: string | null;
  send_policy_mode: SendPolicyMode | null;
  test_recipients: string[] | null;
  throughput_mps: number;
  send_pace: number;
  marketing_messages_api: boolean | null;
  marketing_messages_refused_until: Date | null;
  probe_next_at: Date | null;
  probe_attempts: number;
  created_at: Date;
};

export function toAccountRecord(r: AccountRow): AccountRecord {
  return {
    id: r.id,
    customerId: r.customer_id,
    type: r.type,
    status: r.status,
    phoneNumber: r.phone_number,
    displayName: r.display_name,
    connectedAt: r.connected_at,
    lastErrorCode: r.last_error_code,
    phoneNumberId: r.phone_number_id,
    wabaId: r.waba_id,
    integrationId: r.integration_id,
    hasManagementToken: r.has_management_token,
    templateManagementVerifiedAt: r.template_management_verified_at,
    wabaVerification: r.waba_verification,
    verifiedName: r.verified_name,
    sendPolicyMode: r.send_policy_mode,
    testRecipients: r.test_recipients ?? [],
    throughputMps: r.throughput_mps,
    sendPace: Number(r.send_pace),
    marketingMessagesApi: r.marketing_messages_api === true,
    marketingMessagesRefusedUntil: r.marketing_messages_refused_until,
    probeNextAt: r.probe_next_at,
    probeAttempts: r.probe_attempts,
    createdAt: r.created_at,
  };
}

/**
 * An account row's access token, unsealed in memory only: null when it has none, or when it does
 * not open (sealed with another key, or not bound to this row).
 */
export function openAccessToken(
  sealer: Pick<Sealer, 'open'>,
  row: { id: string; access_token_enc: string | null },
): string | null {
  if (!row.access_token_enc) return null;
  try {
    return sealer.open(row.access_token_enc, {
      table: 'chat_accounts',
      column: 'access_token_enc',
      id: row.id,
    });
  } catch {
    return null;
  }
}
