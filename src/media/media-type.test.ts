import { describe, expect, it } from 'vitest';

import {
  AAC,
  AMR,
  detectType,
  DOC,
  DOCX,
  isAnimatedWebp,
  JPEG,
  M4A,
  mediaMismatch,
  MP3,
  MP4,
  OCTET_STREAM,
  OGG_OPUS,
  OGG_OTHER,
  PDF,
  PNG,
  PPT,
  PPTX,
  TEXT,
  THREE_GPP,
  WEBP,
  XLS,
  XLSX,
} from './media-type.js';

const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const pdf = Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1');
const ole = (stream: string) =>
  Buffer.concat([
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
    Buffer.alloc(500),
    Buffer.from(stream, 'utf16le'),
    Buffer.alloc(100),
  ]);
const zip = (entry: string) =>
  Buffer.concat([
    Buffer.from([0x50, 0x4b, 0x03, 0x04]),
    Buffer.alloc(26),
    Buffer.from('[Content_Types].xml'),
    Buffer.alloc(40),
    Buffer.from(entry),
  ]);
const binary = Buffer.from([0x00, 0x01, 0x02, 0xfe, 0x00, 0x9c, 0x11]);

describe('detectType', () => {
  it('believes the content first, whatever the declared type and extension say', () => {
    expect(detectType(jpeg, 'text/plain', 'notes.txt')).toBe(JPEG);
    expect(detectType(png, 'application/pdf', 'report.pdf')).toBe(PNG);
    expect(detectType(pdf, 'image/jpeg', 'photo.jpg')).toBe(PDF);
    expect(detectType(ole('WordDocument'), 'application/octet-stream', 'x.bin')).toBe(DOC);
    expect(detectType(ole('Workbook'), null, 'x')).toBe(XLS);
    expect(detectType(ole('PowerPoint Document'), null, null)).toBe(PPT);
    expect(detectType(zip('word/document.xml'), 'application/zip', 'a.zip')).toBe(DOCX);
    expect(detectType(zip('xl/workbook.xml'), null, null)).toBe(XLSX);
    expect(detectType(zip('ppt/presentation.xml'), null, null)).toBe(PPTX);
  });

  it('does not believe a declared or named format the bytes do not show', () => {
    expect(detectType(Buffer.from('hello, not an image'), 'image/png', 'fake.png')).toBe(TEXT);
    expect(detectType(binary, 'application/pdf', 'fake.pdf')).toBe(OCTET_STREAM);
    expect(detectType(binary, 'text/plain', 'fake.txt')).toBe(OCTET_STREAM);
  });

  it('falls back to the Content-Type, then to the extension, for what content cannot tell', () => {
    expect(detectType(binary, 'video/mp4', 'clip.bin')).toBe('video/mp4');
    expect(detectType(binary, 'application/octet-stream', 'clip.mp4')).toBe('video/mp4');
    expect(detectType(binary, 'image/gif', 'anim.bin')).toBe('image/gif');
    expect(detectType(binary, 'application/octet-stream', 'anim.gif')).toBe('image/gif');
    expect(detectType(Buffer.from('a,b\n1,2\n'), 'text/csv; charset=utf-8', 'x.csv')).toBe('text/csv');
    expect(detectType(Buffer.from('plain words\n'), null, 'readme.txt')).toBe(TEXT);
    expect(detectType(Buffer.from('plain words\n'), null, null)).toBe(TEXT);
    expect(detectType(binary, null, null)).toBe(OCTET_STREAM);
  });

  it('treats invalid UTF-8 as binary, not text', () => {
    expect(
      detectType(Buffer.from([0x68, 0x69, 0xc3, 0x28, 0x0a, 0x61, 0x62, 0x63, 0x64, 0x65]), 'text/plain', 'a.txt'),
    ).toBe(OCTET_STREAM);
  });
});

const ftyp = (brand: string) =>
  Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from(`ftyp${brand}`), Buffer.alloc(20)]);
const riff = (chunk: string, flags = 0) =>
  Buffer.concat([
    Buffer.from('RIFF'),
    Buffer.alloc(4),
    Buffer.from(`WEBP${chunk}`),
    Buffer.from([10, 0, 0, 0, flags]),
    Buffer.alloc(20),
  ]);

describe('detectType: audio, video and stickers (decision 0032)', () => {
  it('tells each container by its bytes', () => {
    expect(
      detectType(Buffer.concat([Buffer.from('OggS'), Buffer.alloc(24), Buffer.from('OpusHead')]), null, null),
    ).toBe(OGG_OPUS);
    expect(
      detectType(Buffer.concat([Buffer.from('OggS'), Buffer.alloc(24), Buffer.from('vorbis')]), 'audio/ogg', 'a.ogg'),
    ).toBe(OGG_OTHER);
    expect(detectType(Buffer.from('#!AMR\n\x3c\x00'), null, null)).toBe(AMR);
    expect(detectType(Buffer.from('ID3\x04\x00'), null, 'x.bin')).toBe(MP3);
    expect(detectType(Buffer.from([0xff, 0xfb, 0x90, 0x64]), null, null)).toBe(MP3);
    expect(detectType(Buffer.from([0xff, 0xf1, 0x50, 0x80]), null, null)).toBe(AAC);
    expect(detectType(ftyp('M4A '), 'video/mp4', 'a.mp4')).toBe(M4A);
    expect(detectType(ftyp('isom'), null, null)).toBe(MP4);
    expect(detectType(ftyp('3gp5'), null, null)).toBe(THREE_GPP);
    expect(detectType(riff('VP8 '), 'image/png', 'x.png')).toBe(WEBP);
  });

  it('does not take an unknown ISO brand (HEIC, QuickTime) or another container for a declared video', () => {
    expect(detectType(ftyp('heic'), 'video/mp4', 'x.mp4')).toBe(OCTET_STREAM);
    expect(detectType(Buffer.from('OggS\0\0\0\0vorbis'), 'video/mp4', 'clip.mp4')).toBe(OGG_OTHER);
  });

  it('keeps text that starts like a container as text, and takes an audio, video or sticker claim for bytes that are no container', () => {
    expect(detectType(Buffer.from('ID3 tags are listed below\n'), 'text/plain', 'notes.txt')).toBe(TEXT);
    expect(detectType(Buffer.from('OggS is a container name\n'), null, 'notes.txt')).toBe(TEXT);
    expect(detectType(binary, 'image/webp', 'sticker.bin')).toBe(WEBP);
    expect(detectType(binary, 'application/ogg', 'clip.bin')).toBe(OGG_OTHER);
  });

  it('tells an animated WebP from a static one', () => {
    expect(isAnimatedWebp(riff('VP8X', 0x02))).toBe(true);
    expect(isAnimatedWebp(riff('VP8X', 0x10))).toBe(false);
    expect(isAnimatedWebp(riff('VP8 '))).toBe(false);
  });
});

describe('mediaMismatch', () => {
  it('applies the provider rules of audio, video and stickers', () => {
    expect(mediaMismatch('audio', OGG_OPUS, 16 * 1024 * 1024)).toBeNull();
    expect(mediaMismatch('audio', MP3, 16 * 1024 * 1024 + 1)).toMatch(/16 MB/);
    expect(mediaMismatch('audio', OGG_OTHER, 10)).toMatch(/Ogg with Opus/);
    expect(mediaMismatch('video', THREE_GPP, 16 * 1024 * 1024)).toBeNull();
    expect(mediaMismatch('video', M4A, 10)).toMatch(/MP4 or 3GPP/);
    expect(mediaMismatch('sticker', WEBP, 100 * 1024, false)).toBeNull();
    expect(mediaMismatch('sticker', WEBP, 100 * 1024 + 1, false)).toMatch(/static sticker must be at most 100 KB/);
    expect(mediaMismatch('sticker', WEBP, 500 * 1024, true)).toBeNull();
    expect(mediaMismatch('sticker', WEBP, 500 * 1024 + 1, true)).toMatch(/500 KB/);
    expect(mediaMismatch('sticker', PNG, 10)).toMatch(/WebP/);
  });

  it('applies the spec media rules', () => {
    expect(mediaMismatch('image', JPEG, 5 * 1024 * 1024)).toBeNull();
    expect(mediaMismatch('image', PNG, 5 * 1024 * 1024 + 1)).toMatch(/5 MB/);
    expect(mediaMismatch('image', PDF, 10)).toMatch(/JPEG or PNG/);
    expect(mediaMismatch('document', PDF, 20 * 1024 * 1024)).toBeNull();
    expect(mediaMismatch('document', TEXT, 10)).toBeNull();
    expect(mediaMismatch('document', JPEG, 10)).toMatch(/PDF, Word/);
    expect(mediaMismatch('document', DOCX, 20 * 1024 * 1024 + 1)).toMatch(/20 MB/);
  });
});
