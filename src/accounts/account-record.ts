// The chat account as the rest of the service sees it (secrets stay sealed until a sender needs them).
import type { Sealer } from '../shared/crypto.js';
import type { AccountStatus, AccountType, SendPolicyMode } from '../shared/vocab.js';

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

export const ACCOUNT_COLUMNS = `id, customer_id, type, status, phone_number, display_name, connected_at, last_error_code,
  phone_number_id, waba_id, integration_id, management_token_enc IS NOT NULL AS has_management_token,
  template_management_verified_at, waba_verification, verified_name, send_policy_mode, test_recipients, throughput_mps, marketing_messages_api, marketing_messages_refused_until, probe_next_at, probe_attempts, created_at`;

export function toAccountRecord(r: Record<string, unknown>): AccountRecord {
  return {
    id: r.id as string,
    customerId: r.customer_id as string,
    type: r.type as AccountType,
    status: r.status as AccountStatus,
    phoneNumber: r.phone_number as string,
    displayName: r.display_name as string,
    connectedAt: (r.connected_at as Date | null) ?? null,
    lastErrorCode: (r.last_error_code as string | null) ?? null,
    phoneNumberId: (r.phone_number_id as string | null) ?? null,
    wabaId: (r.waba_id as string | null) ?? null,
    integrationId: (r.integration_id as string | null) ?? null,
    hasManagementToken: r.has_management_token === true,
    templateManagementVerifiedAt: (r.template_management_verified_at as Date | null) ?? null,
    wabaVerification: (r.waba_verification as string | null) ?? null,
    verifiedName: (r.verified_name as string | null) ?? null,
    sendPolicyMode: (r.send_policy_mode as SendPolicyMode | null) ?? null,
    testRecipients: (r.test_recipients as string[] | null) ?? [],
    throughputMps: Number(r.throughput_mps),
    marketingMessagesApi: r.marketing_messages_api === true,
    marketingMessagesRefusedUntil: (r.marketing_messages_refused_until as Date | null) ?? null,
    probeNextAt: (r.probe_next_at as Date | null) ?? null,
    probeAttempts: Number(r.probe_attempts ?? 0),
    createdAt: r.created_at as Date,
  };
}

/**
 * An account row's access token, unsealed in memory only: null when it has none, or when it does
 * not open (sealed with another key, or not bound to this row).
 */
export function openAccessToken(sealer: Pick<Sealer, 'open'>, row: Record<string, unknown>): string | null {
  if (!row.access_token_enc) return null;
  try {
    return sealer.open(row.access_token_enc as string, {
      table: 'chat_accounts',
      column: 'access_token_enc',
      id: row.id as string,
    });
  } catch {
    return null;
  }
}
