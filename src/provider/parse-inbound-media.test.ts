import { describe, expect, it } from 'vitest';

import { DEFAULT_INBOUND_MEDIA_TYPES, readMimeList } from '../config-inbound-media.js';
import { inboundMediaOf, typeAllowed } from './parse-inbound-media.js';

describe('the file of an inbound message', () => {
  it('reads the id, type, checksum and file name of each kind the provider documents', () => {
    const hex = 'a'.repeat(64);
    expect(
      inboundMediaOf({
        type: 'audio',
        audio: { id: '123', mime_type: 'audio/ogg; codecs=opus', sha256: hex, voice: true },
      }),
    ).toEqual({
      kind: 'audio',
      providerMediaId: '123',
      mimeType: 'audio/ogg; codecs=opus',
      sha256: hex,
      filename: null,
    });
    const base64 = Buffer.alloc(32, 1).toString('base64');
    expect(
      inboundMediaOf({
        type: 'document',
        document: { id: 456, mime_type: 'application/pdf', sha256: base64, filename: 'invoice.pdf', caption: 'x' },
      }),
    ).toEqual({
      kind: 'document',
      providerMediaId: '456',
      mimeType: 'application/pdf',
      sha256: '01'.repeat(32),
      filename: 'invoice.pdf',
    });
    expect(inboundMediaOf({ type: 'sticker', sticker: { id: '7', sha256: 'not a digest' } })).toMatchObject({
      kind: 'sticker',
      mimeType: null,
      sha256: null,
    });
    // No file: other kinds, or a media object without an id.
    expect(inboundMediaOf({ type: 'text', text: { body: 'hi' } })).toBeNull();
    expect(inboundMediaOf({ type: 'image', image: { mime_type: 'image/jpeg' } })).toBeNull();
    expect(inboundMediaOf({ type: 'image' })).toBeNull();
  });

  it('matches types against the allowed list, parameters ignored, with type/* wildcards', () => {
    expect(typeAllowed('audio/ogg; codecs=opus', DEFAULT_INBOUND_MEDIA_TYPES)).toBe(true);
    expect(typeAllowed('IMAGE/JPEG', DEFAULT_INBOUND_MEDIA_TYPES)).toBe(true);
    expect(typeAllowed('application/zip', DEFAULT_INBOUND_MEDIA_TYPES)).toBe(false);
    expect(typeAllowed(null, DEFAULT_INBOUND_MEDIA_TYPES)).toBe(false);
    expect(typeAllowed('image/gif', ['image/*'])).toBe(true);
    expect(typeAllowed('video/mp4', ['image/*'])).toBe(false);
    const problems: string[] = [];
    expect(readMimeList('image/*, Application/PDF', problems)).toEqual(['image/*', 'application/pdf']);
    expect(readMimeList('pdf', problems)).toBe(DEFAULT_INBOUND_MEDIA_TYPES);
    expect(problems).toEqual([expect.stringMatching(/^INBOUND_MEDIA_TYPES must be MIME types/)]);
  });
});
