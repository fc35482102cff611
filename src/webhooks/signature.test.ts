import crypto from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { signatureHeader, verifyWebhookSignature } from './signature.js';

describe('webhook signatures', () => {
  const body = '{"eventId":"evt_1","type":"webhook.test","data":{"a":"ä"}}';
  it('verifies what it signs, with either secret after a rotation', () => {
    const header = signatureHeader(body, ['whsec_new', 'whsec_old'], 1_800_000_000);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    const expected = crypto.createHmac('sha256', 'whsec_new').update(`1800000000.${body}`).digest('hex');
    expect(header.split(',')[1]).toBe(`v1=${expected}`);
    for (const secret of ['whsec_new', 'whsec_old'])
      expect(verifyWebhookSignature(body, header, secret, { nowSeconds: 1_800_000_100 })).toBe(true);
    expect(verifyWebhookSignature(Buffer.from(body), header, 'whsec_new', { nowSeconds: 1_800_000_000 })).toBe(true);
  });
  it('refuses another secret, another body, an old timestamp and garbage', () => {
    const header = signatureHeader(body, ['whsec_new'], 1_800_000_000);
    expect(verifyWebhookSignature(body, header, 'whsec_other', { nowSeconds: 1_800_000_000 })).toBe(false);
    expect(verifyWebhookSignature(body.replace('ä', 'a'), header, 'whsec_new', { nowSeconds: 1_800_000_000 })).toBe(
      false,
    );
    expect(verifyWebhookSignature(body, header, 'whsec_new', { nowSeconds: 1_800_000_301 })).toBe(false);
    for (const bad of [undefined, '', 't=abc,v1=00', 'v1=zz', `t=1800000000,v1=${'0'.repeat(64)}`]) {
      expect(verifyWebhookSignature(body, bad, 'whsec_new', { nowSeconds: 1_800_000_000 })).toBe(false);
    }
  });
});
