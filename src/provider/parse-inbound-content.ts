// The content of one inbound provider message, by kind (decision 0033): what the user chose, sent
// or reacted with, bounded field by field. Media carry only the provider's description (the file
// is fetched elsewhere). Shapes: docs/provider-protocol-2026.md, "Inbound kinds".

export type InboundMedia = {
  /** image, video, audio, document or sticker. */
  kind: string;
  providerMediaId: string | null;
  mimeType: string | null;
  sha256: string | null;
  caption: string | null;
  filename: string | null;
  /** Audio only: a voice note recorded in the app; null for other kinds. */
  voice: boolean | null;
  /** Sticker only; null for other kinds. */
  animated: boolean | null;
};

export type InboundContact = {
  name: { formattedName: string | null; firstName: string | null; lastName: string | null };
  phones: { phone: string | null; waId: string | null; type: string | null }[];
  emails: { email: string | null; type: string | null }[];
  organization: { company: string | null; department: string | null; title: string | null } | null;
  urls: { url: string | null; type: string | null }[];
  birthday: string | null;
};

/**
 * Click-to-chat ad attribution (`referral`, on the first message a user sends from an ad or a
 * post): what the ad was, where it led, and the click id (`ctwa_clid`) the ad platform reports.
 */
export type InboundReferral = {
  sourceUrl: string | null;
  sourceId: string | null;
  /** `ad` or `post`. */
  sourceType: string | null;
  headline: string | null;
  body: string | null;
  /** `image` or `video`. */
  mediaType: string | null;
  imageUrl: string | null;
  videoUrl: string | null;
  thumbnailUrl: string | null;
  ctwaClid: string | null;
};

/** A cart sent from the business's catalog (`type: "order"`). */
export type InboundOrder = {
  catalogId: string | null;
  text: string | null;
  productItems: {
    productRetailerId: string | null;
    quantity: number | null;
    itemPrice: number | null;
    currency: string | null;
  }[];
};

/**
 * A Flow's answer (`interactive.nfm_reply`, decision 0075): the provider's `response_json` parsed
 * when it is JSON within the bound, else kept as text with the reason.
 */
export type InboundFlowReply = {
  /** `flow`, or `address_message`. */
  name: string | null;
  body: string | null;
  /** The parsed answer (an object, as the Flow returned it); null when not parsed. */
  response: unknown;
  /** The `response_json` text when it was not parsed (invalid or too long, then cut); else null. */
  responseRaw: string | null;
  invalidJson: boolean;
  truncated: boolean;
  /** The answer's `flow_token`: the token given with the send. */
  flowToken: string | null;
};

export type InboundContent = {
  media: InboundMedia | null;
  interactive: {
    type: string;
    id: string | null;
    title: string | null;
    description: string | null;
    /** nfm_reply only (absent on rows stored before). */
    flowReply?: InboundFlowReply | null;
  } | null;
  button: { payload: string | null; text: string | null } | null;
  /** The message reacted to, by provider id; emoji null when the user removed the reaction. */
  reaction: { emoji: string | null; providerMessageId: string | null } | null;
  location: {
    latitude: number | null;
    longitude: number | null;
    name: string | null;
    address: string | null;
    url: string | null;
  } | null;
  contacts: InboundContact[] | null;
  system: { type: string | null; body: string | null } | null;
  unsupported: { type: string | null } | null;
  /** The ad or post the user came from (on any kind; absent on rows stored before). */
  referral?: InboundReferral | null;
  /** A cart from the catalog (absent on rows stored before). */
  order?: InboundOrder | null;
  /** The provider's errors on this message (e.g. 131051 unsupported, 131052 media not downloadable). */
  providerErrors: { code: number | null; title: string | null; details: string | null }[];
  /** The message's context beyond the quoted message (which is `replyTo`); null when it had none. */
  context: {
    forwarded: boolean;
    frequentlyForwarded: boolean;
    referredProduct: { catalogId: string | null; productRetailerId: string | null } | null;
  } | null;
};

/** Bounds of the content's fields (characters, items). */
export const CONTENT_LIMITS = {
  id: 256,
  short: 200,
  caption: 1024,
  text: 1024,
  url: 2000,
  contacts: 20,
  perContact: 10,
  orderItems: 100,
  errors: 5,
  /** A Flow's `response_json` (characters): ours, the provider documents no bound. */
  flowResponse: 20_000,
} as const;

const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const arr = (v: unknown, max: number): unknown[] => (Array.isArray(v) ? v.slice(0, max) : []);
/** A non-empty string cut to `max` characters (by code point, so an emoji is never split). */
const s = (v: unknown, max: number = CONTENT_LIMITS.short): string | null => {
  if (typeof v === 'number' && Number.isFinite(v)) v = String(v);
  if (typeof v !== 'string' || v === '') return null;
  return v.length <= max ? v : Array.from(v).slice(0, max).join('');
};
const num = (v: unknown): number | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
};

const MEDIA_KINDS = new Set(['image', 'video', 'audio', 'document', 'sticker']);

function media(kind: string, m: Record<string, unknown>): InboundMedia {
  const o = obj(m[kind]);
  return {
    kind,
    providerMediaId: s(o.id, CONTENT_LIMITS.id),
    mimeType: s(o.mime_type, 100),
    sha256: s(o.sha256, 100),
    caption: kind === 'audio' || kind === 'sticker' ? null : s(o.caption, CONTENT_LIMITS.caption),
    filename: kind === 'document' ? s(o.filename, 240) : null,
    voice: kind === 'audio' ? o.voice === true : null,
    animated: kind === 'sticker' ? o.animated === true : null,
  };
}

function contact(raw: unknown): InboundContact {
  const c = obj(raw);
  const n = obj(c.name);
  const org = obj(c.org);
  const max = CONTENT_LIMITS.perContact;
  return {
    name: { formattedName: s(n.formatted_name), firstName: s(n.first_name), lastName: s(n.last_name) },
    phones: arr(c.phones, max).map((p) => ({
      phone: s(obj(p).phone, 40),
      waId: s(obj(p).wa_id, 40),
      type: s(obj(p).type, 40),
    })),
    emails: arr(c.emails, max).map((e) => ({ email: s(obj(e).email, 320), type: s(obj(e).type, 40) })),
    organization:
      Object.keys(org).length > 0
        ? { company: s(org.company), department: s(org.department), title: s(org.title) }
        : null,
    urls: arr(c.urls, max).map((u) => ({ url: s(obj(u).url, CONTENT_LIMITS.url), type: s(obj(u).type, 40) })),
    birthday: s(c.birthday, 20),
  };
}

function context(m: Record<string, unknown>): InboundContent['context'] {
  if (m.context === undefined || m.context === null) return null;
  const c = obj(m.context);
  const product = obj(c.referred_product);
  return {
    forwarded: c.forwarded === true || c.frequently_forwarded === true,
    frequentlyForwarded: c.frequently_forwarded === true,
    referredProduct:
      Object.keys(product).length > 0
        ? { catalogId: s(product.catalog_id), productRetailerId: s(product.product_retailer_id) }
        : null,
  };
}

function referral(m: Record<string, unknown>): InboundReferral | null {
  if (m.referral === undefined || m.referral === null) return null;
  const r = obj(m.referral);
  const url = (k: string) => s(r[k], CONTENT_LIMITS.url);
  return {
    sourceUrl: url('source_url'),
    sourceId: s(r.source_id, CONTENT_LIMITS.id),
    sourceType: s(r.source_type, 50),
    headline: s(r.headline, CONTENT_LIMITS.text),
    body: s(r.body, CONTENT_LIMITS.text),
    mediaType: s(r.media_type, 50),
    imageUrl: url('image_url'),
    videoUrl: url('video_url'),
    thumbnailUrl: url('thumbnail_url'),
    ctwaClid: s(r.ctwa_clid, 500),
  };
}

function order(m: Record<string, unknown>): InboundOrder {
  const o = obj(m.order);
  return {
    catalogId: s(o.catalog_id, CONTENT_LIMITS.id),
    text: s(o.text, CONTENT_LIMITS.text),
    productItems: arr(o.product_items, CONTENT_LIMITS.orderItems).map((raw) => {
      const i = obj(raw);
      return {
        productRetailerId: s(i.product_retailer_id, CONTENT_LIMITS.id),
        quantity: num(i.quantity),
        itemPrice: num(i.item_price),
        currency: s(i.currency, 10),
      };
    }),
  };
}

/** Characters the database cannot keep in JSON (NUL, unpaired surrogates), made U+FFFD. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const scrub = (v: unknown): unknown =>
  typeof v === 'string'
    ? v.replace(UNSTORABLE, '\uFFFD')
    : Array.isArray(v)
      ? v.map(scrub)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [String(scrub(k)), scrub(x)]))
        : v;

function flowReply(r: Record<string, unknown>): InboundFlowReply {
  const raw = typeof r.response_json === 'string' ? r.response_json : null;
  const base = { name: s(r.name, 50), body: s(r.body, CONTENT_LIMITS.text), flowToken: null };
  const max = CONTENT_LIMITS.flowResponse;
  if (raw === null) return { ...base, response: null, responseRaw: null, invalidJson: false, truncated: false };
  if (raw.length > max)
    return { ...base, response: null, responseRaw: s(raw, max), invalidJson: false, truncated: true };
  let parsed: unknown;
  try {
    parsed = scrub(JSON.parse(raw));
  } catch {
    return { ...base, response: null, responseRaw: String(scrub(raw)), invalidJson: true, truncated: false };
  }
  const token = obj(parsed).flow_token;
  return {
    ...base,
    response: parsed,
    responseRaw: null,
    invalidJson: false,
    truncated: false,
    flowToken: s(token, 1000),
  };
}

const EMPTY: Omit<InboundContent, 'providerErrors' | 'context'> = {
  media: null,
  interactive: null,
  button: null,
  reaction: null,
  location: null,
  contacts: null,
  system: null,
  unsupported: null,
  referral: null,
  order: null,
};

/** The kind-specific content of one provider message (`value.messages[]` item). */
export function inboundContent(m: Record<string, unknown>): InboundContent {
  const type = typeof m.type === 'string' ? m.type : '';
  const content: InboundContent = {
    ...EMPTY,
    providerErrors: arr(m.errors, CONTENT_LIMITS.errors).map((raw) => {
      const e = obj(raw);
      return {
        code: num(e.code),
        title: s(e.title, 500) ?? s(e.message, 500),
        details: s(obj(e.error_data).details, 500),
      };
    }),
    context: context(m),
    referral: referral(m),
  };
  if (MEDIA_KINDS.has(type)) content.media = media(type, m);
  else if (type === 'interactive') {
    const i = obj(m.interactive);
    const kind = s(i.type, 50) ?? 'unknown';
    const reply = obj(i[kind]);
    content.interactive = {
      type: kind,
      id: s(reply.id, CONTENT_LIMITS.id),
      title: s(reply.title),
      description: s(reply.description),
      ...(kind === 'nfm_reply' ? { flowReply: flowReply(reply) } : {}),
    };
  } else if (type === 'button') {
    const b = obj(m.button);
    content.button = { payload: s(b.payload, CONTENT_LIMITS.text), text: s(b.text, CONTENT_LIMITS.text) };
  } else if (type === 'reaction') {
    const r = obj(m.reaction);
    content.reaction = { emoji: s(r.emoji, 20), providerMessageId: s(r.message_id, 500) };
  } else if (type === 'location') {
    const l = obj(m.location);
    content.location = {
      latitude: num(l.latitude),
      longitude: num(l.longitude),
      name: s(l.name, CONTENT_LIMITS.text),
      address: s(l.address, CONTENT_LIMITS.text),
      url: s(l.url, CONTENT_LIMITS.url),
    };
  } else if (type === 'contacts') content.contacts = arr(m.contacts, CONTENT_LIMITS.contacts).map(contact);
  else if (type === 'system') {
    const sys = obj(m.system);
    content.system = { type: s(sys.type, 100), body: s(sys.body, CONTENT_LIMITS.text) };
  } else if (type === 'unsupported') content.unsupported = { type: s(obj(m.unsupported).type, 100) };
  else if (type === 'order') content.order = order(m);
  return content;
}

/** The content of a row stored before content was kept (or without one): every kind null. */
export const NO_CONTENT: InboundContent = { ...EMPTY, providerErrors: [], context: null };
