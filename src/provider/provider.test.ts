import { describe, expect, it } from 'vitest';

import { parseGraphError } from './cloud-api.js';
import { classifyProviderError, pairRateDelayMs } from './error-map.js';
import { buildSendPayload } from './payload.js';

describe('classifyProviderError', () => {
  it.each([
    [130429, 400, 'retry', 'PROVIDER_RATE_LIMITED'],
    [131056, 400, 'retry', 'RECIPIENT_RATE_LIMITED'],
    [131000, 500, 'retry', 'PROVIDER_UNAVAILABLE'],
    [131026, 400, 'fail', 'UNDELIVERABLE'],
    [131047, 400, 'fail', 'REENGAGEMENT_REQUIRED'],
    [132001, 404, 'fail', 'TEMPLATE_NOT_FOUND'],
    [190, 401, 'account', 'AUTH_REJECTED'],
    [131031, 403, 'account', 'ACCOUNT_LOCKED'],
    [131042, 400, 'account', 'ACCOUNT_PAYMENT_ISSUE'],
    [250, 403, 'account', 'PERMISSION_DENIED'],
    [2635, 400, 'fail', 'API_VERSION_UNSUPPORTED'],
  ])('code %i → %s %s', (code, http, action, errorCode) => {
    expect(classifyProviderError(code, null, http)).toMatchObject({ action, errorCode });
  });
  it('falls back on the HTTP status for unknown codes and bodies', () => {
    expect(classifyProviderError(null, null, 502)).toMatchObject({ action: 'retry' });
    expect(classifyProviderError(null, null, 429)).toMatchObject({
      action: 'retry',
      errorCode: 'PROVIDER_RATE_LIMITED',
    });
    expect(classifyProviderError(999999, null, 400)).toMatchObject({ action: 'fail', errorCode: 'PROVIDER_ERROR' });
  });
  it('backs a recipient off 1, 4, 16, 64 s', () => {
    expect([1, 2, 3, 4].map(pairRateDelayMs)).toEqual([1000, 4000, 16000, 64000]);
  });
});

describe('parseGraphError', () => {
  it('keeps code, subcode, message with details, and trace id; tolerates string codes', () => {
    expect(
      parseGraphError({
        error: {
          message: '(#130429) Rate limit hit',
          code: '130429',
          error_subcode: 2494055,
          error_data: { details: 'Throughput reached.' },
          fbtrace_id: 'Az8',
        },
      }),
    ).toEqual({
      code: 130429,
      subcode: 2494055,
      message: '(#130429) Rate limit hit: Throughput reached.',
      fbtraceId: 'Az8',
    });
    expect(parseGraphError({ nope: 1 })).toBeNull();
    expect(parseGraphError(null)).toBeNull();
  });
});

describe('buildSendPayload', () => {
  const id = '6f1c2c9e-9d7a-4b7e-8a57-0a3b1c2d3e4f';
  it('builds text, image and document payloads with our id in biz_opaque_callback_data', () => {
    expect(buildSendPayload('+15551234567', { type: 'text', text: 'hi' }, id)).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '15551234567',
      biz_opaque_callback_data: id,
      type: 'text',
      text: { preview_url: false, body: 'hi' },
    });
    expect(
      buildSendPayload('+1555', { type: 'image', image: { url: 'https://x.test/a.png' }, caption: 'c' }, id).image,
    ).toEqual({ link: 'https://x.test/a.png', caption: 'c' });
    expect(
      buildSendPayload('+1555', { type: 'image', image: { mediaId: id } }, id, { id: '1037543291543636' }).image,
    ).toEqual({ id: '1037543291543636' });
    // An uploaded document goes by provider id, named as uploaded unless the send names it.
    expect(
      buildSendPayload('+1555', { type: 'document', document: { mediaId: id } }, id, { id: '77', filename: 'q3.pdf' })
        .document,
    ).toEqual({ id: '77', filename: 'q3.pdf' });
    expect(
      buildSendPayload(
        '+1555',
        { type: 'document', document: { mediaId: id, filename: 'named.pdf' }, caption: 'c' },
        id,
        { id: '77', filename: 'q3.pdf' },
      ).document,
    ).toEqual({ id: '77', filename: 'named.pdf', caption: 'c' });
    expect(
      buildSendPayload('+1555', { type: 'document', document: { url: 'https://x.test/files/Invoice%2012.pdf' } }, id)
        .document,
    ).toEqual({ link: 'https://x.test/files/Invoice%2012.pdf', filename: 'Invoice 12.pdf' });
    expect(
      buildSendPayload('+1555', { type: 'document', document: { url: 'https://x.test/bad%E0%A4%A' } }, id).document,
    ).toMatchObject({ filename: 'bad%E0%A4%A' });
  });
  it('leaves components out of a template without values', () => {
    expect(
      buildSendPayload('+1555', { type: 'template', template: { name: 'hello', language: 'en' } }, id).template,
    ).toEqual({ name: 'hello', language: { code: 'en' } });
  });
});
