// The parts of a message content that several capabilities read (intake, media checks, the
// worker's media step, the provider payload): which file a content sends, whatever its kind.

/** Content kinds that send one file, by upload (`mediaId`) or by URL. */
export const MEDIA_KINDS = ['image', 'document', 'audio', 'video', 'sticker'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** Kinds that take `content.caption` (the provider's rule: not audio, not sticker). */
export const CAPTIONED_KINDS: readonly string[] = ['image', 'document', 'video'];

/** A file of a content: by upload or by URL; `filename` for documents. */
export type MediaRef = { url?: string; mediaId?: string; filename?: string };

export const isMediaKind = (v: unknown): v is MediaKind => (MEDIA_KINDS as readonly unknown[]).includes(v);

/** An interactive message's header that is a file (image, video, document). */
type InteractiveHeader = { type?: string } & Partial<Record<MediaKind, MediaRef>>;

/**
 * The file a content sends, with its kind: the media of an image, document, audio, video or
 * sticker content, the file header of an interactive or template one; null when it sends none.
 */
export function contentMedia(content: {
  type: string;
  interactive?: { header?: InteractiveHeader };
  template?: { components?: { headerMedia?: MediaRef & { type: string } } };
  [kind: string]: unknown;
}): { kind: MediaKind; ref: MediaRef } | null {
  if (isMediaKind(content.type)) {
    const ref = content[content.type] as MediaRef | undefined;
    return ref ? { kind: content.type, ref } : null;
  }
  const header = content.type === 'interactive' ? content.interactive?.header : undefined;
  if (header && isMediaKind(header.type) && header[header.type])
    return { kind: header.type, ref: header[header.type]! };
  // A template's media header (decision 0068); a carousel's card files go by URL only.
  const templateMedia = content.type === 'template' ? content.template?.components?.headerMedia : undefined;
  if (templateMedia && isMediaKind(templateMedia.type)) {
    const { url, mediaId, filename } = templateMedia;
    return { kind: templateMedia.type, ref: { url, mediaId, filename } };
  }
  return null;
}

/**
 * The earlier message a message replies to (replyTo) or reacts to (a reaction), as accepted:
 * ours by `messageId` or an inbound one by `inboundMessageId`, with the provider's id of it once
 * known (an inbound message's always; ours once it was sent). Stored in messages.reply_target.
 */
export type ReplyTarget = { messageId?: string; inboundMessageId?: string; providerMessageId?: string };
