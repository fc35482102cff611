// Our message content → the provider's send payload. Our messageId rides in
// biz_opaque_callback_data so every status receipt can be matched even before the send's
// answer is saved. The shapes of the kinds added beyond the spec (decision 0032) follow the
// provider's reference (docs/provider-protocol-2026.md, "Outgoing message kinds").
import { contentMedia, isMediaKind, type MediaRef } from '../shared/content.js';
import type { ContentType } from '../shared/vocab.js';

type Typed<T> = T & { type?: string };

export type Interactive = {
  type: 'button' | 'list' | 'cta_url' | 'flow';
  header?: { type: string; text?: string } & Partial<Record<'image' | 'video' | 'document', MediaRef>>;
  body: { text: string };
  footer?: { text: string };
  buttons?: { id: string; title: string }[];
  list?: {
    button: string;
    sections: { title?: string; rows: { id: string; title: string; description?: string }[] }[];
  };
  ctaUrl?: { displayText: string; url: string };
  flow?: {
    flowId?: string;
    flowName?: string;
    flowToken?: string;
    cta: string;
    action?: 'navigate' | 'data_exchange';
    actionPayload?: { screen: string; data?: Record<string, unknown> };
    mode?: 'published' | 'draft';
  };
};

export type ContactCard = {
  name: {
    formattedName: string;
    firstName?: string;
    lastName?: string;
    middleName?: string;
    prefix?: string;
    suffix?: string;
  };
  phones?: Typed<{ phone: string; waId?: string }>[];
  emails?: Typed<{ email: string }>[];
  org?: { company?: string; department?: string; title?: string };
  urls?: Typed<{ url: string }>[];
  addresses?: Typed<{
    street?: string;
    city?: string;
    state?: string;
    zip?: string;
    country?: string;
    countryCode?: string;
  }>[];
  /** YYYY-MM-DD. */
  birthday?: string;
};

/** A value for one template button (decision 0068): its payload, URL variable or coupon code. */
type TemplateButton = { index: number; subType: 'quick_reply' | 'url' | 'copy_code'; value: string };
type TemplateMedia = MediaRef & { type: 'image' | 'video' | 'document' };

export type TemplateParameters = {
  body?: string[];
  header?: string[];
  headerMedia?: TemplateMedia;
  buttons?: TemplateButton[];
  cards?: { headerMedia: TemplateMedia; body?: string[]; buttons?: TemplateButton[] }[];
};

export type SendContent = {
  type: ContentType;
  text?: string;
  template?: { name: string; language: string; components?: TemplateParameters };
  image?: MediaRef;
  document?: MediaRef;
  audio?: MediaRef;
  video?: MediaRef;
  sticker?: MediaRef;
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  contacts?: ContactCard[];
  interactive?: Interactive;
  reaction?: { messageId?: string; externalId?: string; inboundMessageId?: string; emoji: string };
  caption?: string;
};

/** What the worker resolved a message's media to at the provider (see dispatch/prepare-media.ts). */
export type ProviderMediaRef = { id: string; filename?: string };

/** The last path segment of a URL, decoded when it can be (a bad %-escape keeps it as is). */
export function lastUrlSegment(url: string): string | undefined {
  const segment = new URL(url).pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(segment) || undefined;
  } catch {
    return segment || undefined;
  }
}

const textParams = (values: string[]) => values.map((text) => ({ type: 'text', text }));

/** A coordinate as a decimal string, never in exponent form (`1e-7` is `0.0000001`). */
export const decimal = (n: number): string => (/e/i.test(String(n)) ? n.toFixed(12).replace(/\.?0+$/, '') : String(n));

/** An object without its undefined fields (the provider refuses some empty ones). */
const defined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** Media go by provider media id once the worker uploaded them, else by link (the provider fetches the URL). */
function mediaObject(ref: { url?: string; providerMediaId?: string }, extra: Record<string, string | undefined>) {
  const base = ref.providerMediaId !== undefined ? { id: ref.providerMediaId } : { link: ref.url };
  return defined({ ...base, ...extra });
}

/** The provider's media object of a content's file (or interactive header), with a document's file name. */
function fileObject(content: SendContent, providerMedia: ProviderMediaRef | null | undefined, caption?: string) {
  const media = contentMedia(content)!;
  const { ref } = media;
  const filename =
    media.kind === 'document'
      ? (ref.filename ?? providerMedia?.filename ?? (ref.url ? lastUrlSegment(ref.url) : undefined))
      : undefined;
  return mediaObject({ url: ref.url, providerMediaId: providerMedia?.id }, { caption, filename });
}

function contactObject(c: ContactCard) {
  const n = c.name;
  return defined({
    name: defined({
      formatted_name: n.formattedName,
      first_name: n.firstName,
      last_name: n.lastName,
      middle_name: n.middleName,
      prefix: n.prefix,
      suffix: n.suffix,
    }),
    phones: c.phones?.map((p) => defined({ phone: p.phone, type: p.type, wa_id: p.waId })),
    emails: c.emails?.map((e) => defined({ email: e.email, type: e.type })),
    org: c.org ? defined({ ...c.org }) : undefined,
    urls: c.urls?.map((u) => defined({ url: u.url, type: u.type })),
    addresses: c.addresses?.map((a) =>
      defined({
        street: a.street,
        city: a.city,
        state: a.state,
        zip: a.zip,
        country: a.country,
        country_code: a.countryCode,
        type: a.type,
      }),
    ),
    birthday: c.birthday,
  });
}

function interactiveObject(content: SendContent, providerMedia: ProviderMediaRef | null | undefined) {
  const i = content.interactive!;
  const h = i.header;
  const header = h
    ? isMediaKind(h.type)
      ? { type: h.type, [h.type]: fileObject(content, providerMedia) }
      : { type: 'text', text: h.text }
    : undefined;
  const action =
    i.type === 'button'
      ? { buttons: i.buttons!.map((b) => ({ type: 'reply', reply: { id: b.id, title: b.title } })) }
      : i.type === 'list'
        ? {
            button: i.list!.button,
            sections: i.list!.sections.map((s) =>
              defined({ title: s.title, rows: s.rows.map((r) => defined({ ...r })) }),
            ),
          }
        : i.type === 'flow'
          ? flowAction(i.flow!)
          : { name: 'cta_url', parameters: { display_text: i.ctaUrl!.displayText, url: i.ctaUrl!.url } };
  return defined({ type: i.type, header, body: { text: i.body.text }, footer: i.footer, action });
}

/**
 * A flow message's action (Flows, "Sending a Flow"; docs/provider-protocol-2026.md): message
 * version 3, the Flow by id or name, the action and, for navigate, its first screen and data.
 */
function flowAction(f: NonNullable<Interactive['flow']>) {
  const p = f.actionPayload;
  return {
    name: 'flow',
    parameters: defined({
      flow_message_version: '3',
      flow_token: f.flowToken,
      flow_id: f.flowId,
      flow_name: f.flowName,
      flow_cta: f.cta,
      flow_action: f.action ?? 'navigate',
      flow_action_payload: p ? defined({ screen: p.screen, data: p.data }) : undefined,
      mode: f.mode,
    }),
  };
}

/** A button's parameter as the provider names it for its sub_type. */
const buttonParameter = (b: TemplateButton) =>
  b.subType === 'quick_reply'
    ? { type: 'payload', payload: b.value }
    : b.subType === 'copy_code'
      ? { type: 'coupon_code', coupon_code: b.value }
      : { type: 'text', text: b.value };

const buttonObjects = (buttons: TemplateButton[] | undefined) =>
  (buttons ?? []).map((b) => ({
    type: 'button',
    sub_type: b.subType,
    index: String(b.index),
    parameters: [buttonParameter(b)],
  }));

const bodyObject = (values: string[] | undefined) =>
  values?.length ? [{ type: 'body', parameters: textParams(values) }] : [];

/** The template's components as the provider takes them: header, body, buttons, carousel cards. */
function templateComponents(content: SendContent, providerMedia: ProviderMediaRef | null | undefined) {
  const c = content.template!.components ?? {};
  const media = c.headerMedia;
  const header = media
    ? [{ type: 'header', parameters: [{ type: media.type, [media.type]: fileObject(content, providerMedia) }] }]
    : c.header?.length
      ? [{ type: 'header', parameters: textParams(c.header) }]
      : [];
  const carousel = c.cards
    ? [
        {
          type: 'carousel',
          cards: c.cards.map((card, i) => ({
            card_index: i,
            components: [
              {
                type: 'header',
                parameters: [{ type: card.headerMedia.type, [card.headerMedia.type]: { link: card.headerMedia.url } }],
              },
              ...bodyObject(card.body),
              ...buttonObjects(card.buttons),
            ],
          })),
        },
      ]
    : [];
  return [...header, ...bodyObject(c.body), ...buttonObjects(c.buttons), ...carousel];
}

/** The payload's type-specific part: `{ type, [type]: … }`. */
function contentPart(
  content: SendContent,
  providerMedia: ProviderMediaRef | null | undefined,
  targetProviderId: string | null,
): Record<string, unknown> {
  switch (content.type) {
    case 'text':
      return { type: 'text', text: { preview_url: false, body: content.text ?? '' } };
    case 'template': {
      const t = content.template!;
      const components = templateComponents(content, providerMedia);
      return {
        type: 'template',
        template: { name: t.name, language: { code: t.language }, ...(components.length ? { components } : {}) },
      };
    }
    case 'image':
    case 'document':
    case 'video':
      return { type: content.type, [content.type]: fileObject(content, providerMedia, content.caption) };
    case 'audio':
    case 'sticker':
      return { type: content.type, [content.type]: fileObject(content, providerMedia) };
    case 'location':
      // The provider's current reference types the coordinates as strings (docs/provider-protocol-2026.md).
      return {
        type: 'location',
        location: defined({
          ...content.location,
          latitude: decimal(content.location!.latitude),
          longitude: decimal(content.location!.longitude),
        }),
      };
    case 'contacts':
      return { type: 'contacts', contacts: content.contacts!.map(contactObject) };
    case 'interactive':
      return { type: 'interactive', interactive: interactiveObject(content, providerMedia) };
    case 'reaction':
      return { type: 'reaction', reaction: { message_id: targetProviderId ?? '', emoji: content.reaction!.emoji } };
  }
}

/**
 * The provider's send payload. `targetProviderId`: the provider's id of the message this one
 * answers (replyTo: the payload's `context`) or reacts to (a reaction's `message_id`).
 */
export function buildSendPayload(
  to: string,
  content: SendContent,
  messageId: string,
  providerMedia?: ProviderMediaRef | null,
  targetProviderId: string | null = null,
): Record<string, unknown> {
  const envelope = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    // A number goes in `to`; a business-scoped user id (no `+`: decision 0036) in `recipient`.
    ...(to.startsWith('+') ? { to: to.slice(1) } : { recipient: to }),
    biz_opaque_callback_data: messageId,
  };
  const context =
    targetProviderId !== null && content.type !== 'reaction' ? { context: { message_id: targetProviderId } } : {};
  return { ...envelope, ...context, ...contentPart(content, providerMedia, targetProviderId) };
}

/** Marks a received message read; `typing` adds the typing indicator (shown up to 25 s or until our reply). */
export function readPayload(providerMessageId: string, typing: boolean): Record<string, unknown> {
  return {
    messaging_product: 'whatsapp',
    status: 'read',
    message_id: providerMessageId,
    ...(typing ? { typing_indicator: { type: 'text' } } : {}),
  };
}
