import { describe, expect, it } from 'vitest';

import type { LookupOutcome } from '../provider/cloud-api.js';
import { judgeProbe, PROBED_ACCOUNT_ERRORS } from './account-probe-policy.js';

const answered = (httpStatus: number, code: number | null): LookupOutcome => ({
  ok: false,
  transport: null,
  httpStatus,
  detail: code === null ? null : { code, subcode: null, message: 'x', fbtraceId: null },
  summary: 'x',
});

describe('judgeProbe', () => {
  it('accepts a 2xx, and a permission error (only an authenticated call gets one)', () => {
    expect(judgeProbe({ ok: true })).toBe('accepted');
    expect(judgeProbe(answered(403, 10))).toBe('accepted');
    expect(judgeProbe(answered(403, 200))).toBe('accepted');
  });
  it('sees a token still refused', () => {
    expect(judgeProbe(answered(401, 190))).toBe('rejected');
    expect(judgeProbe(answered(401, 0))).toBe('rejected');
  });
  it('learns nothing from transport failures, provider trouble, throttling or an unknown number', () => {
    expect(judgeProbe({ ok: false, transport: 'timeout', httpStatus: null, detail: null, summary: 't' })).toBe(
      'inconclusive',
    );
    expect(judgeProbe(answered(503, null))).toBe('inconclusive');
    expect(judgeProbe(answered(400, 80007))).toBe('inconclusive');
    expect(judgeProbe(answered(400, 100))).toBe('inconclusive');
    expect(judgeProbe(answered(401, null))).toBe('inconclusive');
    expect(judgeProbe(answered(400, 368))).toBe('inconclusive');
  });
  it('probes rejected tokens only', () => {
    expect([...PROBED_ACCOUNT_ERRORS]).toEqual(['AUTH_REJECTED']);
  });
});
