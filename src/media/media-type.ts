// What a file is: by its content first (JPEG, PNG, PDF, the Office formats, plain text, and the
// audio, video and sticker containers the provider takes), then by
// the type it was declared with (the part's or response's Content-Type), then by its extension.
// A declaration that names a format we recognise by content, but which the content does not
// match, is a lie and is not believed.

import type { MediaKind } from '../shared/content.js';

export const JPEG = 'image/jpeg';
export const PNG = 'image/png';
export const PDF = 'application/pdf';
export const TEXT = 'text/plain';
export const DOC = 'application/msword';
export const XLS = 'application/vnd.ms-excel';
export const PPT = 'application/vnd.ms-powerpoint';
export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
export const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
export const OCTET_STREAM = 'application/octet-stream';
export const AAC = 'audio/aac';
export const AMR = 'audio/amr';
export const MP3 = 'audio/mpeg';
export const M4A = 'audio/mp4';
export const OGG_OPUS = 'audio/ogg';
/** An Ogg file without an Opus stream: the provider takes Ogg audio only with Opus. */
export const OGG_OTHER = 'application/ogg';
export const MP4 = 'video/mp4';
export const THREE_GPP = 'video/3gpp';
export const WEBP = 'image/webp';

export const IMAGE_TYPES: readonly string[] = [JPEG, PNG];
export const DOCUMENT_TYPES: readonly string[] = [PDF, TEXT, DOC, XLS, PPT, DOCX, XLSX, PPTX];
/** The provider's audio, video and sticker types (docs/provider-protocol-2026.md, "Outgoing message kinds"). */
export const AUDIO_TYPES: readonly string[] = [AAC, AMR, MP3, M4A, OGG_OPUS];
export const VIDEO_TYPES: readonly string[] = [MP4, THREE_GPP];
export const STICKER_TYPES: readonly string[] = [WEBP];

/** Size limits of the spec: images 5 MB, documents and uploads 20 MB (binary megabytes). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
/** The provider's limits: audio and video 16 MB; stickers 100 KB static, 500 KB animated. */
export const MAX_AUDIO_BYTES = 16 * 1024 * 1024;
export const MAX_VIDEO_BYTES = 16 * 1024 * 1024;
export const MAX_STATIC_STICKER_BYTES = 100 * 1024;
export const MAX_ANIMATED_STICKER_BYTES = 500 * 1024;

/** Types we recognise from the bytes; a declaration of one of these is checked against them. */
const SNIFFABLE = new Set([
  JPEG,
  PNG,
  PDF,
  DOC,
  XLS,
  PPT,
  DOCX,
  XLSX,
  PPTX,
  TEXT,
  AAC,
  AMR,
  MP3,
  M4A,
  OGG_OPUS,
  OGG_OTHER,
  MP4,
  THREE_GPP,
  WEBP,
]);

/**
 * The audio, video and sticker types (told by their containers, beyond the spec's JPEG, PNG, PDF
 * and Office formats): a claim of one is taken for bytes that are no container, and text is never
 * one of them (see detectType).
 */
const AV_TYPES = new Set([AAC, AMR, MP3, M4A, OGG_OPUS, OGG_OTHER, MP4, THREE_GPP, WEBP]);

/** Bytes that start like an audio/video container (ISO box, Ogg, RIFF, AMR, ID3). */
function isContainer(b: Buffer): boolean {
  const head = b.toString('latin1', 0, 6);
  return (
    b.toString('latin1', 4, 8) === 'ftyp' ||
    head.startsWith('OggS') ||
    head.startsWith('RIFF') ||
    head === '#!AMR\n' ||
    head.startsWith('ID3')
  );
}

const BY_EXTENSION: Record<string, string> = {
  jpg: JPEG,
  jpeg: JPEG,
  jpe: JPEG,
  png: PNG,
  pdf: PDF,
  txt: TEXT,
  text: TEXT,
  doc: DOC,
  xls: XLS,
  ppt: PPT,
  docx: DOCX,
  xlsx: XLSX,
  pptx: PPTX,
  gif: 'image/gif',
  webp: WEBP,
  mp4: MP4,
  '3gp': THREE_GPP,
  mp3: MP3,
  aac: AAC,
  amr: AMR,
  m4a: M4A,
  ogg: OGG_OPUS,
  opus: OGG_OPUS,
  csv: 'text/csv',
  zip: 'application/zip',
};

const startsWith = (b: Buffer, bytes: number[]) => b.length >= bytes.length && bytes.every((v, i) => b[i] === v);
const contains = (b: Buffer, s: string, encoding: BufferEncoding = 'latin1') => b.includes(Buffer.from(s, encoding));

/** The legacy Office formats share one container (OLE2); its stream names tell them apart. */
function oleKind(b: Buffer): string | null {
  if (contains(b, 'WordDocument', 'utf16le')) return DOC;
  if (contains(b, 'Workbook', 'utf16le') || contains(b, 'Book', 'utf16le')) return XLS;
  if (contains(b, 'PowerPoint Document', 'utf16le')) return PPT;
  return null;
}

/** The Office Open XML formats are zip files whose entries live under word/, xl/ or ppt/. */
function ooxmlKind(b: Buffer): string | null {
  if (contains(b, 'word/')) return DOCX;
  if (contains(b, 'xl/')) return XLSX;
  if (contains(b, 'ppt/')) return PPTX;
  return null;
}

/** Plain text: valid UTF-8 (or ASCII) throughout, without NUL or other binary control bytes. */
export function looksLikeText(b: Buffer): boolean {
  if (b.length === 0) return false;
  for (const byte of b)
    if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c && byte !== 0x1b) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(b);
    return true;
  } catch {
    return false;
  }
}

/** MP4-family brands of video files (ISO base media; M4A and 3GPP have brands of their own). */
const MP4_BRANDS = new Set(['isom', 'iso2', 'iso4', 'iso5', 'iso6', 'mp41', 'mp42', 'avc1', 'dash', 'M4V ', 'mmp4']);

/** An ISO base media file (`ftyp` box first): audio M4A, 3GPP or MP4 video by its major brand. */
function isoMediaKind(b: Buffer): string | null {
  const brand = b.toString('latin1', 8, 12);
  if (brand === 'M4A ' || brand === 'M4B ') return M4A;
  if (brand.startsWith('3gp') || brand.startsWith('3g2')) return THREE_GPP;
  return MP4_BRANDS.has(brand) ? MP4 : null;
}

/** MPEG audio frame sync: ADTS (layer 0) is AAC, layer III is MP3. */
function mpegAudioKind(b: Buffer): string | null {
  if (b.length < 2 || b[0] !== 0xff || (b[1]! & 0xe0) !== 0xe0) return null;
  const layer = (b[1]! >> 1) & 0x3;
  if (layer === 0 && (b[1]! & 0xf6) === 0xf0) return AAC;
  return layer === 1 ? MP3 : null;
}

/** An animated WebP: the extended header's animation flag, or an ANIM chunk. */
export function isAnimatedWebp(b: Buffer): boolean {
  if (b.toString('latin1', 12, 16) === 'VP8X' && b.length > 20 && (b[20]! & 0x02) !== 0) return true;
  return contains(b.subarray(0, 4096), 'ANIM');
}

/** Signatures of the audio, video and sticker containers. */
function avKind(b: Buffer): string | null {
  if (b.toString('latin1', 0, 4) === 'OggS') return contains(b.subarray(0, 512), 'OpusHead') ? OGG_OPUS : OGG_OTHER;
  if (b.toString('latin1', 0, 6) === '#!AMR\n') return AMR;
  if (b.toString('latin1', 0, 3) === 'ID3') return MP3;
  if (b.toString('latin1', 4, 8) === 'ftyp') return isoMediaKind(b);
  if (b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return WEBP;
  return mpegAudioKind(b);
}

/** The type the bytes prove, or null when they prove nothing we know. */
export function typeFromContent(b: Buffer): string | null {
  if (startsWith(b, [0xff, 0xd8, 0xff])) return JPEG;
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return PNG;
  if (startsWith(b, [0x25, 0x50, 0x44, 0x46, 0x2d])) return PDF; // %PDF-
  if (startsWith(b, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return oleKind(b);
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04])) return ooxmlKind(b);
  return avKind(b);
}

export function typeFromExtension(filename: string | null | undefined): string | null {
  const m = /\.([A-Za-z0-9]{1,8})$/.exec(filename ?? '');
  return m ? (BY_EXTENSION[m[1]!.toLowerCase()] ?? null) : null;
}

/** `type/subtype` of a Content-Type header, lower case, without parameters; null when absent or meaningless. */
export function essence(contentType: string | null | undefined): string | null {
  const t = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(t) || t === OCTET_STREAM || t === 'binary/octet-stream')
    return null;
  return t === 'image/jpg' || t === 'image/pjpeg' ? JPEG : t;
}

/** The file's type: content first, then the declared Content-Type, then the extension. */
export function detectType(
  bytes: Buffer,
  declared: string | null | undefined,
  filename: string | null | undefined,
): string {
  const proven = typeFromContent(bytes);
  const text = looksLikeText(bytes);
  // Text that happens to start like a container ("ID3 tags…", "OggS…") stays text, as the spec's
  // order (content for its formats, then the declaration, then the extension) had it.
  if (proven && !(AV_TYPES.has(proven) && text)) return proven;
  for (const claim of [essence(declared), typeFromExtension(filename)]) {
    if (claim === null) continue;
    if (claim === TEXT || (claim.startsWith('text/') && !SNIFFABLE.has(claim))) {
      if (text) return claim;
      continue;
    }
    // A recognisable format the bytes do not show is not believed. Audio and video are the
    // exception when the bytes are no container at all (their signatures vary more than the
    // spec's formats do): a claim is then taken, as the spec's fallback to the declaration and
    // the extension says; a container of another brand (HEIC in an ISO box) is not one of them.
    if (SNIFFABLE.has(claim) && !(AV_TYPES.has(claim) && !isContainer(bytes))) continue;
    return claim;
  }
  return text ? TEXT : OCTET_STREAM;
}

type KindRule = { types: readonly string[]; maxBytes: number; what: string; size: string };

/** The spec's media rules (image, document) and the provider's for the kinds added (decision 0032). */
const KIND_RULES: Record<MediaKind, KindRule> = {
  image: { types: IMAGE_TYPES, maxBytes: MAX_IMAGE_BYTES, what: 'an image must be JPEG or PNG', size: '5 MB' },
  document: {
    types: DOCUMENT_TYPES,
    maxBytes: MAX_UPLOAD_BYTES,
    what: 'a document must be PDF, Word, Excel, PowerPoint or plain text',
    size: '20 MB',
  },
  audio: {
    types: AUDIO_TYPES,
    maxBytes: MAX_AUDIO_BYTES,
    what: 'an audio file must be AAC, AMR, MP3, M4A or Ogg with Opus',
    size: '16 MB',
  },
  video: { types: VIDEO_TYPES, maxBytes: MAX_VIDEO_BYTES, what: 'a video must be MP4 or 3GPP', size: '16 MB' },
  sticker: {
    types: STICKER_TYPES,
    maxBytes: MAX_ANIMATED_STICKER_BYTES,
    what: 'a sticker must be WebP',
    size: '500 KB',
  },
};

/** The most bytes a file of this kind may have (a sticker: animated ones). */
export const maxBytesOf = (kind: MediaKind): number => KIND_RULES[kind].maxBytes;

/**
 * Whether a file of this type and size can be sent as this kind: null, or what is wrong. A
 * sticker over 100 KB must be animated: `animated` tells (unknown: not checked here).
 */
export function mediaMismatch(kind: MediaKind, mimetype: string, sizeBytes: number, animated?: boolean): string | null {
  const rule = KIND_RULES[kind];
  if (!rule.types.includes(mimetype)) return `${rule.what}, this file is ${mimetype}`;
  if (sizeBytes > rule.maxBytes)
    return `${rule.what.split(' must ')[0]} must be at most ${rule.size}, this file has ${sizeBytes} bytes`;
  if (kind === 'sticker' && animated === false && sizeBytes > MAX_STATIC_STICKER_BYTES)
    return `a static sticker must be at most 100 KB (500 KB when animated), this file has ${sizeBytes} bytes`;
  return null;
}
