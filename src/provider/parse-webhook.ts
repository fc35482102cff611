// The provider's webhook payload → the status receipts it carries (every entry, change and
// status; a malformed item is skipped, never the whole batch).
import crypto from 'node:crypto';

import { type InboundContent, inboundContent } from './parse-inbound-content.js';
import { inboundMediaOf, type InboundMediaRef } from './parse-inbound-media.js';

export type ReceiptStatus = 'sent' | 'delivered' | 'read' | 'failed';

export type StatusReceipt = {
  phoneNumberId: string;
  providerMessageId: string;
  status: ReceiptStatus;
  occurredAt: Date;
  /** Our messageId, echoed from biz_opaque_callback_data when it is one. */
  messageId: string | null;
  error: { code: number | null; title: string | null; details: string | null } | null;
  /** What the message costs, as the receipt's `pricing` says it (null when it has none). */
  pricing?: ReceiptPricing | null;
  /** The recipient's business-scoped user id (`recipient_user_id`), when the receipt names it. */
  recipientUserId?: string | null;
};

/**
 * A status receipt's `pricing` object, kept as the provider sent it (docs/provider-protocol-2026.md):
 * `billable` (deprecated by the provider; null when absent), `pricingModel` (`PMP`, formerly
 * `CBP`), `category` (`marketing`, `utility`, `authentication`, `service` …) and `type`
 * (`regular`, `free_customer_service`, `free_entry_point` …). No value is interpreted here.
 */
export type ReceiptPricing = {
  billable: boolean | null;
  pricingModel: string | null;
  category: string | null;
  type: string | null;
};

/** The `pricing` object of a status item; null when absent or naming nothing. */
export function parsePricing(v: unknown): ReceiptPricing | null {
  const p = obj(v);
  const text = (k: string) => str(p[k])?.slice(0, 100) ?? null;
  const pricing = {
    billable: typeof p.billable === 'boolean' ? p.billable : null,
    pricingModel: text('pricing_model'),
    category: text('category'),
    type: text('type'),
  };
  return Object.values(pricing).every((x) => x === null) ? null : pricing;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUSES: Record<string, ReceiptStatus> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  played: 'read',
  failed: 'failed',
};

const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Every `entry[].changes[].value` of a payload, with the phone-number id it concerns. */
function* changeValues(payload: unknown): Generator<{ phoneNumberId: string | null; value: Record<string, unknown> }> {
  for (const entry of asArray(obj(payload).entry)) {
    for (const change of asArray(obj(entry).changes)) {
      const value = obj(obj(change).value);
      yield { phoneNumberId: str(obj(value.metadata).phone_number_id), value };
    }
  }
}
const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

export function parseStatusReceipts(payload: unknown): { receipts: StatusReceipt[]; skipped: number } {
  const receipts: StatusReceipt[] = [];
  let skipped = 0;
  for (const { phoneNumberId, value } of changeValues(payload)) {
    for (const raw of asArray(value.statuses)) {
      const s = obj(raw);
      const status = STATUSES[String(s.status)];
      const id = str(s.id);
      const seconds = Number(s.timestamp);
      if (!phoneNumberId || !status || !id || !Number.isFinite(seconds) || seconds <= 0 || seconds > 1e11) {
        skipped++;
        continue;
      }
      const opaque = str(s.biz_opaque_callback_data);
      const e = obj(asArray(s.errors)[0]);
      receipts.push({
        phoneNumberId,
        providerMessageId: id.slice(0, 500),
        status,
        occurredAt: new Date(seconds * 1000),
        messageId: opaque && UUID.test(opaque) ? opaque.toLowerCase() : null,
        error:
          status === 'failed'
            ? {
                code: typeof e.code === 'number' ? e.code : Number.isFinite(Number(e.code)) ? Number(e.code) : null,
                title: str(e.title)?.slice(0, 500) ?? str(e.message)?.slice(0, 500) ?? null,
                details: str(obj(e.error_data).details)?.slice(0, 500) ?? null,
              }
            : null,
        pricing: parsePricing(s.pricing),
        recipientUserId: str(s.recipient_user_id)?.slice(0, 200) ?? null,
      });
    }
  }
  return { receipts, skipped };
}

export type InboundMessage = {
  phoneNumberId: string;
  providerMessageId: string;
  /** E.164 when the platform gave the number (`from` / wa_id), else null. */
  fromPhone: string | null;
  /** The platform's privacy identifier of the sender, when given. */
  userId: string | null;
  /** The sender's former user id, on a `user_changed_user_id` system message (userId is the new one). */
  previousUserId?: string | null;
  fromDisplayName: string;
  messageType: string;
  text: string | null;
  displayText: string | null;
  /** The provider id of the quoted message, when the user replied to one. */
  contextId: string | null;
  receivedAt: Date;
  /** The file the message carries (image, audio, video, sticker, document), fetched after ingestion (decision 0034). */
  file?: InboundMediaRef | null;
  /** The kind-specific content (decision 0033); absent for a connector's message (then none). */
  content?: InboundContent;
  /** Set when the item could not be read as a message and is kept as `unsupported` (why). */
  unapplied?: UnappliedReason;
};

const VOICE = (m: Record<string, unknown>) => obj(m.audio).voice === true;

/** Our messageType, the text (body or caption) and a short human summary of one inbound message. */
function describeInbound(m: Record<string, unknown>): {
  messageType: string;
  text: string | null;
  displayText: string | null;
} {
  const type = str(m.type) ?? 'unknown';
  const caption = (k: string) => str(obj(m[k]).caption);
  switch (type) {
    case 'text':
      return { messageType: 'text', text: str(obj(m.text).body), displayText: str(obj(m.text).body) };
    case 'image':
    case 'video':
    case 'document':
    case 'sticker':
      return { messageType: type, text: caption(type), displayText: caption(type) ?? `[${type}]` };
    case 'audio':
      return {
        messageType: VOICE(m) ? 'voice_note' : 'audio',
        text: null,
        displayText: VOICE(m) ? '[voice note]' : '[audio]',
      };
    case 'reaction':
      return { messageType: 'reaction', text: str(obj(m.reaction).emoji), displayText: str(obj(m.reaction).emoji) };
    case 'location': {
      const l = obj(m.location);
      return {
        messageType: 'location',
        text: str(l.name) ?? str(l.address),
        displayText: `[location ${String(l.latitude)},${String(l.longitude)}]`,
      };
    }
    case 'contacts':
      return { messageType: 'contact', text: null, displayText: '[contact]' };
    case 'button':
      return { messageType: 'button', text: str(obj(m.button).text), displayText: str(obj(m.button).text) };
    case 'interactive': {
      const i = obj(m.interactive);
      const reply = obj(i.button_reply ?? i.list_reply);
      // A Flow's answer (nfm_reply) has no title; its body ("Sent") is what the chat shows.
      const shown = str(reply.title) ?? str(obj(i.nfm_reply).body);
      return { messageType: 'interactive', text: shown, displayText: shown };
    }
    case 'order': {
      const o = obj(m.order);
      const items = asArray(o.product_items).length;
      return {
        messageType: 'order',
        text: str(o.text),
        displayText: `[order: ${items} item${items === 1 ? '' : 's'}]`,
      };
    }
    default:
      return { messageType: type, text: null, displayText: null };
  }
}

/** A BSUID: an ISO 3166 alpha-2 country code, a dot, letters and digits (a parent id: `CC.ENT.…`). */
const USER_ID = /^[A-Z]{2}\.[A-Za-z0-9.]{1,150}$/;
/** The provider's body of the system message: "User <name> changed from <old id> to <new id>". */
const CHANGED = /changed from (\S+) to (\S+?)\.?\s*$/;

/**
 * A `user_changed_user_id` system message: the sender's new user id (`system.user_id`, or named in
 * the body), the old one (`previous_user_id`, or named in the body; null when neither says), and
 * the number when the provider shows it (`system.wa_id`). The provider posts it without `from`
 * and without `contacts` (docs/provider-protocol-2026.md, "Senders known only by a user id").
 */
function userIdChange(
  m: Record<string, unknown>,
): { previousUserId: string | null; userId: string | null; waId: string | null } | null {
  const system = obj(m.system);
  if (str(m.type) !== 'system' || str(system.type) !== 'user_changed_user_id') return null;
  const named = CHANGED.exec(str(system.body) ?? '');
  const bodyId = (i: number) => (named && USER_ID.test(named[i]!) ? named[i]! : null);
  return {
    previousUserId: str(system.previous_user_id) ?? str(m.previous_user_id) ?? bodyId(1),
    userId: str(system.user_id) ?? str(system.new_user_id) ?? bodyId(2) ?? str(m.from_user_id),
    waId: str(system.wa_id),
  };
}

/** Why an item of `value.messages[]` could not be read as a message (it is kept as `unsupported`). */
export type UnappliedReason = 'no_sender' | 'no_id' | 'bad_timestamp' | 'not_an_object';

/** An item that names no business number (`metadata.phone_number_id`): no account to keep it under. */
export type UnroutedItem = { rawType: string | null };

const rawTypeOf = (m: Record<string, unknown>) => str(m.type)?.slice(0, 100) ?? null;

/**
 * Inbound messages of a webhook payload (`value.messages[]` with `value.contacts[]`). No item is
 * dropped without trace: one that cannot be read as a message (no sender, no id, no time) but
 * names its business number comes back as `messageType: "unsupported"` with its raw type and the
 * reason (`unapplied`); one that names no number is counted in `unrouted`.
 */
export function parseInboundMessages(
  payload: unknown,
  now = new Date(),
): { messages: InboundMessage[]; skipped: number; unrouted: UnroutedItem[] } {
  const messages: InboundMessage[] = [];
  const unrouted: UnroutedItem[] = [];
  for (const { phoneNumberId, value } of changeValues(payload)) {
    const contacts = asArray(value.contacts).map(obj);
    for (const raw of asArray(value.messages)) {
      const m = obj(raw);
      if (!phoneNumberId) {
        unrouted.push({ rawType: rawTypeOf(m) });
        continue;
      }
      const id = str(m.id);
      const seconds = Number(m.timestamp);
      const change = userIdChange(m);
      const byNumber = str(m.from) ? contacts.find((c) => str(c.wa_id) === str(m.from)) : undefined;
      // Without `from`, the sender is the one contact the provider gives with the message (a user
      // who hides their number: `contacts[0].user_id`, and `wa_id` only when the number is shown).
      const lone = !str(m.from) && contacts.length === 1 ? contacts[0] : undefined;
      const waId = str(m.from) ?? str(lone?.wa_id) ?? change?.waId ?? null;
      const userId =
        change?.userId ?? str(m.from_user_id) ?? str(m.user_id) ?? str(byNumber?.user_id) ?? str(lone?.user_id);
      const timely = Number.isFinite(seconds) && seconds > 0 && seconds <= 1e11;
      const unapplied: UnappliedReason | null =
        raw === null || typeof raw !== 'object' || Array.isArray(raw)
          ? 'not_an_object'
          : !id
            ? 'no_id'
            : !timely
              ? 'bad_timestamp'
              : !waId && !userId
                ? 'no_sender'
                : null;
      const contact =
        byNumber ?? contacts.find((c) => userId && str(c.user_id) === userId) ?? lone ?? contacts[0] ?? {};
      const digits = waId && /^\d{6,15}$/.test(waId) ? waId : null;
      const described = describeInbound(m);
      const content = inboundContent(m);
      messages.push({
        phoneNumberId,
        // An item without an id is named by its bytes, so a retry of it is still a duplicate.
        providerMessageId:
          id?.slice(0, 500) ??
          `unidentified.${crypto
            .createHash('sha256')
            .update(JSON.stringify(raw ?? null))
            .digest('hex')
            .slice(0, 40)}`,
        fromPhone: digits ? `+${digits}` : null,
        userId: userId?.slice(0, 200) ?? null,
        ...(change?.previousUserId ? { previousUserId: change.previousUserId.slice(0, 200) } : {}),
        fromDisplayName: (str(obj(contact.profile).name) ?? '').slice(0, 200),
        ...described,
        ...(unapplied
          ? { messageType: 'unsupported', displayText: described.displayText ?? `[${rawTypeOf(m) ?? 'unknown'}]` }
          : {}),
        contextId: str(obj(m.context).id)?.slice(0, 500) ?? null,
        receivedAt: timely ? new Date(seconds * 1000) : now,
        file: unapplied ? null : inboundMediaOf(m),
        content: unapplied ? { ...content, unsupported: { type: rawTypeOf(m) } } : content,
        ...(unapplied ? { unapplied } : {}),
      });
    }
  }
  return { messages, skipped: unrouted.length, unrouted };
}

/** A user's marketing preference change (`field: user_preferences`, `value.user_preferences[]`). */
export type UserPreference = {
  phoneNumberId: string;
  /** E.164 of the user. */
  phone: string;
  value: 'stop' | 'resume';
  category: string | null;
  detail: string | null;
  occurredAt: Date;
};

/** The user_preferences items of a webhook payload (malformed ones skipped). */
export function parseUserPreferences(payload: unknown): { preferences: UserPreference[]; skipped: number } {
  const preferences: UserPreference[] = [];
  let skipped = 0;
  for (const { phoneNumberId, value } of changeValues(payload)) {
    for (const raw of asArray(value.user_preferences)) {
      const p = obj(raw);
      const waId = str(p.wa_id);
      const seconds = Number(p.timestamp);
      const choice = str(p.value)?.toLowerCase();
      if (
        !phoneNumberId ||
        !waId ||
        !/^\d{6,15}$/.test(waId) ||
        (choice !== 'stop' && choice !== 'resume') ||
        !Number.isFinite(seconds) ||
        seconds <= 0 ||
        seconds > 1e11
      ) {
        skipped++;
        continue;
      }
      preferences.push({
        phoneNumberId,
        phone: `+${waId}`,
        value: choice,
        category: str(p.category)?.slice(0, 100) ?? null,
        detail: str(p.detail)?.slice(0, 300) ?? null,
        occurredAt: new Date(seconds * 1000),
      });
    }
  }
  return { preferences, skipped };
}

/** Which of a template's facts a template webhook changes. */
export type TemplateChangeKind = 'status' | 'quality' | 'category';

/** One change of a template (fields message_template_status_update / _quality_update / template_category_update). */
export type TemplateChange = {
  /** entry[].id: template webhooks carry no phone-number id, so they are routed by WABA. */
  wabaId: string;
  kind: TemplateChangeKind;
  templateId: string;
  name: string | null;
  language: string | null;
  /** The new status, quality score or category (upper case). */
  value: string;
  reason: string | null;
  /** The category the status update names, when it names one. */
  category: string | null;
  /** The entry's `time` (when the provider made the change); the time received when it has none. */
  occurredAt: Date;
};

const TEMPLATE_FIELDS: Record<string, { kind: TemplateChangeKind; key: string }> = {
  message_template_status_update: { kind: 'status', key: 'event' },
  message_template_quality_update: { kind: 'quality', key: 'new_quality_score' },
  template_category_update: { kind: 'category', key: 'new_category' },
};

/** The template changes of a webhook payload (malformed ones skipped). */
export function parseTemplateChanges(
  payload: unknown,
  now = new Date(),
): { changes: TemplateChange[]; skipped: number } {
  const changes: TemplateChange[] = [];
  let skipped = 0;
  for (const entry of asArray(obj(payload).entry)) {
    const wabaId = str(obj(entry).id) ?? (typeof obj(entry).id === 'number' ? String(obj(entry).id) : null);
    const seconds = Number(obj(entry).time);
    const occurredAt = Number.isFinite(seconds) && seconds > 0 && seconds < 1e11 ? new Date(seconds * 1000) : now;
    for (const change of asArray(obj(entry).changes)) {
      const field = TEMPLATE_FIELDS[String(obj(change).field)];
      if (!field) continue;
      const v = obj(obj(change).value);
      const rawId = v.message_template_id;
      const templateId = typeof rawId === 'number' && Number.isFinite(rawId) ? String(rawId) : str(rawId);
      const value = str(v[field.key])?.toUpperCase().slice(0, 100) ?? null;
      if (!wabaId || !templateId || !value) {
        skipped++;
        continue;
      }
      const reason = str(v.reason);
      changes.push({
        wabaId: wabaId.slice(0, 100),
        kind: field.kind,
        templateId: templateId.slice(0, 100),
        name: str(v.message_template_name)?.slice(0, 512) ?? null,
        language: str(v.message_template_language)?.slice(0, 20) ?? null,
        value,
        reason: reason && reason !== 'NONE' ? reason.slice(0, 300) : null,
        category: str(v.message_template_category)?.toUpperCase().slice(0, 50) ?? null,
        occurredAt,
      });
    }
  }
  return { changes, skipped };
}
