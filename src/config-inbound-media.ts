// The inbound file settings (decision 0034): INBOUND_MEDIA_MAX_BYTES, INBOUND_MEDIA_TYPES (by
// default the provider's documented types, the same lists the media module checks uploads
// against) and INBOUND_MEDIA_MAX_ATTEMPTS.
import type { Readers } from './config-readers.js';
import { AUDIO_TYPES, DOCUMENT_TYPES, IMAGE_TYPES, STICKER_TYPES, VIDEO_TYPES } from './media/media-type.js';

/** The provider's documented types of received files (docs/api.md, "Inbound files"): INBOUND_MEDIA_TYPES' default. */
export const DEFAULT_INBOUND_MEDIA_TYPES: readonly string[] = [
  ...IMAGE_TYPES,
  ...STICKER_TYPES,
  ...AUDIO_TYPES,
  ...VIDEO_TYPES,
  ...DOCUMENT_TYPES,
];

/** INBOUND_MEDIA_TYPES: comma-separated MIME types (`type/subtype` or `type/*`), lower case. */
export function readMimeList(raw: string | null, problems: string[]): readonly string[] {
  if (raw === null) return DEFAULT_INBOUND_MEDIA_TYPES;
  const items = raw
    .split(',')
    .map((x) => x.trim().toLowerCase())
    .filter((x) => x !== '');
  if (items.length > 0 && items.every((x) => /^[a-z0-9][a-z0-9.+-]*\/(\*|[a-z0-9][a-z0-9.+-]*)$/.test(x))) return items;
  problems.push(`INBOUND_MEDIA_TYPES must be MIME types (type/subtype or type/*) separated by commas (got "${raw}")`);
  return DEFAULT_INBOUND_MEDIA_TYPES;
}

/** The inbound file settings (decision 0034), read by loadConfig with its readers. */
export type InboundMediaSettings = {
  /** Inbound files above this are recorded `skipped_too_large`, not fetched. */
  inboundMediaMaxBytes: number;
  /** Inbound file types fetched (base MIME types, or `type/*`); others are recorded `skipped_type`. */
  inboundMediaTypes: readonly string[];
  /** Fetch attempts of one inbound file before it is recorded `failed` (also given up on as its media id expires). */
  inboundMediaMaxAttempts: number;
};

export function readInboundMediaSettings({ int, str }: Readers, problems: string[]): InboundMediaSettings {
  return {
    inboundMediaMaxBytes: int('INBOUND_MEDIA_MAX_BYTES', 16 * 1024 * 1024, 1, 100 * 1024 * 1024),
    inboundMediaTypes: readMimeList(str('INBOUND_MEDIA_TYPES'), problems),
    inboundMediaMaxAttempts: int('INBOUND_MEDIA_MAX_ATTEMPTS', 12, 1, 100),
  };
}
