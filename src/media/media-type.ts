// What a file is: by its content first (JPEG, PNG, PDF, the Office formats, plain text), then by
// the type it was declared with (the part's or response's Content-Type), then by its extension.
// A declaration that names a format we recognise by content, but which the content does not
// match, is a lie and is not believed.

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

export const IMAGE_TYPES: readonly string[] = [JPEG, PNG];
export const DOCUMENT_TYPES: readonly string[] = [PDF, TEXT, DOC, XLS, PPT, DOCX, XLSX, PPTX];

/** Size limits of the spec: images 5 MB, documents and uploads 20 MB (binary megabytes). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;

/** Types we recognise from the bytes; a declaration of one of these is checked against them. */
const SNIFFABLE = new Set([JPEG, PNG, PDF, DOC, XLS, PPT, DOCX, XLSX, PPTX, TEXT]);

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
  webp: 'image/webp',
  mp4: 'video/mp4',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
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

/** The type the bytes prove, or null when they prove nothing we know. */
export function typeFromContent(b: Buffer): string | null {
  if (startsWith(b, [0xff, 0xd8, 0xff])) return JPEG;
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return PNG;
  if (startsWith(b, [0x25, 0x50, 0x44, 0x46, 0x2d])) return PDF; // %PDF-
  if (startsWith(b, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return oleKind(b);
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04])) return ooxmlKind(b);
  return null;
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
  if (proven) return proven;
  const text = looksLikeText(bytes);
  for (const claim of [essence(declared), typeFromExtension(filename)]) {
    if (claim === null) continue;
    if (claim === TEXT || (claim.startsWith('text/') && !SNIFFABLE.has(claim))) {
      if (text) return claim;
      continue;
    }
    // A recognisable format the bytes do not show is not believed.
    if (SNIFFABLE.has(claim)) continue;
    return claim;
  }
  return text ? TEXT : OCTET_STREAM;
}

/** Whether a file of this type and size can be sent as an image / a document (the spec's media rules). */
export function mediaMismatch(kind: 'image' | 'document', mimetype: string, sizeBytes: number): string | null {
  if (kind === 'image') {
    if (!IMAGE_TYPES.includes(mimetype)) return `an image must be JPEG or PNG, this file is ${mimetype}`;
    if (sizeBytes > MAX_IMAGE_BYTES) return `an image must be at most 5 MB, this file has ${sizeBytes} bytes`;
    return null;
  }
  if (!DOCUMENT_TYPES.includes(mimetype))
    return `a document must be PDF, Word, Excel, PowerPoint or plain text, this file is ${mimetype}`;
  if (sizeBytes > MAX_UPLOAD_BYTES) return `a document must be at most 20 MB, this file has ${sizeBytes} bytes`;
  return null;
}
