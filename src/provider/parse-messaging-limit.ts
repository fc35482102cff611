// The provider's word on a business portfolio's messaging limit (docs/provider-protocol-2026.md,
// "Messaging limits"): `business_capability_update` (max_daily_conversations_per_business, an
// integer, -1 unlimited; before it max_daily_conversation_per_phone) and
// `phone_number_quality_update` (max_daily_conversations_per_business as a tier name; before it
// current_limit, which a THROUGHPUT_UPGRADE event uses for the throughput level instead). Both are
// routed by WABA (entry[].id): they carry no phone-number id.
import { limitOfTier } from '../shared/messaging-tiers.js';

export type MessagingLimitChange = {
  wabaId: string;
  /** The portfolio's limit; null: unlimited. */
  limit: number | null;
  field: 'business_capability_update' | 'phone_number_quality_update';
};

const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The limit a change's value states, the current field first; undefined when it states none. */
function limitIn(field: string, v: Record<string, unknown>): number | null | undefined {
  const current = limitOfTier(v.max_daily_conversations_per_business);
  if (current !== undefined) return current;
  if (field === 'business_capability_update') return limitOfTier(v.max_daily_conversation_per_phone);
  // current_limit also names throughput levels: only a messaging-limit event's is a limit.
  if (String(v.event ?? '').toUpperCase() === 'THROUGHPUT_UPGRADE') return undefined;
  return limitOfTier(v.current_limit);
}

/** The messaging-limit changes of a webhook payload; items that state no limit are skipped. */
export function parseMessagingLimitChanges(payload: unknown): { changes: MessagingLimitChange[]; skipped: number } {
  const changes: MessagingLimitChange[] = [];
  let skipped = 0;
  for (const entry of asArray(obj(payload).entry)) {
    const rawId = obj(entry).id;
    const wabaId = typeof rawId === 'string' && rawId !== '' ? rawId : typeof rawId === 'number' ? String(rawId) : null;
    for (const change of asArray(obj(entry).changes)) {
      const field = String(obj(change).field);
      if (field !== 'business_capability_update' && field !== 'phone_number_quality_update') continue;
      const limit = limitIn(field, obj(obj(change).value));
      if (!wabaId || limit === undefined) {
        // A capability update about phone-number counts only, or a throughput change: not ours.
        if (!wabaId) skipped++;
        continue;
      }
      changes.push({ wabaId: wabaId.slice(0, 100), limit, field });
    }
  }
  return { changes, skipped };
}
