// Small real files for media tests, and an upload helper for POST /media.
export const JPEG_BYTES = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00]),
  Buffer.alloc(200, 7),
  Buffer.from([0xff, 0xd9]),
]);
export const PNG_BYTES = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(100, 3),
]);
export const PDF_BYTES = Buffer.from(
  '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
  'latin1',
);
export const DOCX_BYTES = Buffer.concat([
  Buffer.from([0x50, 0x4b, 0x03, 0x04]),
  Buffer.alloc(26),
  Buffer.from('[Content_Types].xml'),
  Buffer.alloc(30),
  Buffer.from('word/document.xml'),
  Buffer.alloc(30),
]);

/** POST /media with one file (and whatever else `extra` adds to the form). */
export async function upload(
  url: string,
  key: string,
  data: Buffer,
  filename = 'file.bin',
  type = 'application/octet-stream',
  extra?: (fd: FormData) => void,
) {
  const fd = new FormData();
  fd.append('file', new Blob([new Uint8Array(data)], { type }), filename);
  extra?.(fd);
  const res = await fetch(`${url}/media`, { method: 'POST', headers: { 'x-api-key': key }, body: fd });
  return { status: res.status, body: (await res.json()) as any };
}
