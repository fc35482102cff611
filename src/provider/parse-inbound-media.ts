// The file an inbound message carries (image, audio or voice note, video, sticker, document): the
// provider's media id, its declared type and checksum, the document's file name. Kept apart from
// the parsing of each kind's content (parse-webhook.ts), which only names this function.

export type InboundMediaKind = 'image' | 'audio' | 'video' | 'sticker' | 'document';

export type InboundMediaRef = {
  kind: InboundMediaKind;
  providerMediaId: string;
  /** As the webhook declares it (`audio/ogg; codecs=opus` kept whole); null when absent. */
  mimeType: string | null;
  /** Hex SHA-256 of the file as the provider gives it (its webhooks give hex; base64 is read too). */
  sha256: string | null;
  filename: string | null;
};

const KINDS: readonly InboundMediaKind[] = ['image', 'audio', 'video', 'sticker', 'document'];

const text = (v: unknown, max: number): string | null => (typeof v === 'string' && v !== '' ? v.slice(0, max) : null);

/** The media of one raw `value.messages[]` item, or null when it carries none. */
export function inboundMediaOf(raw: Record<string, unknown>): InboundMediaRef | null {
  const kind = KINDS.find((k) => k === raw.type);
  if (!kind) return null;
  const m = raw[kind];
  if (!m || typeof m !== 'object' || Array.isArray(m)) return null;
  const o = m as Record<string, unknown>;
  const id = typeof o.id === 'number' ? String(o.id) : text(o.id, 200);
  if (!id) return null;
  return {
    kind,
    providerMediaId: id,
    mimeType: text(o.mime_type, 200),
    sha256: normalizeSha256(text(o.sha256, 200)),
    filename: kind === 'document' ? text(o.filename, 255) : null,
  };
}

/** Lower-case hex; a base64 digest (32 bytes) is turned into hex; anything else is dropped. */
export function normalizeSha256(v: string | null): string | null {
  if (v === null) return null;
  if (/^[0-9a-f]{64}$/i.test(v)) return v.toLowerCase();
  const bytes = Buffer.from(v, 'base64');
  return bytes.length === 32 && /^[A-Za-z0-9+/_-]+=*$/.test(v) ? bytes.toString('hex') : null;
}

/** Whether a declared type (parameters such as `; codecs=opus` ignored) is in the list. */
export function typeAllowed(mimeType: string | null, allowed: readonly string[]): boolean {
  const base = mimeType?.split(';')[0]?.trim().toLowerCase();
  if (!base) return false;
  return allowed.some((a) => a === base || (a.endsWith('/*') && base.startsWith(a.slice(0, -1))));
}
