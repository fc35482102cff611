// The scanner behind the end-of-run check that no secret a test created shows in a service log.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { createScanner, fingerprint, type RecordedSecret } from './support/secret-scan.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secret-scan-'));
const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};
const secret = (kind: string, value: string): RecordedSecret => ({ kind, value, test: 'scan' });

describe('secret scan', () => {
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('finds each secret with its kind, count and a fingerprint, never its value', () => {
    const key = secret('api-key', 'ak_live_0123456789abcdef');
    const other = secret('api-key', 'ak_live_fedcba9876543210');
    const token = secret('provider-access-token', 'EAAG-token-"quoted"-ü');
    const file = write(
      'a.log',
      [
        JSON.stringify({ msg: 'request', url: '/messages' }),
        JSON.stringify({ msg: 'oops', header: `x ${key.value} y` }),
        JSON.stringify({ msg: 'again', k: key.value, t: token.value }),
      ].join('\n'),
    );
    const leaks = createScanner([key, other, token]).scanFile(file);
    expect(leaks).toEqual([
      { kind: 'api-key', test: 'scan', fingerprint: fingerprint(key.value), file, count: 2 },
      { kind: 'provider-access-token', test: 'scan', fingerprint: fingerprint(token.value), file, count: 1 },
    ]);
    expect(JSON.stringify(leaks)).not.toContain('0123456789');
  });

  it('finds a secret split across read chunks, once, and ignores values too short to tell apart', () => {
    const key = secret('webhook-secret', 'whsec_abcdefghijklmnopqrstuvwxyz');
    const text = `${'x'.repeat(1000)}${key.value}${'y'.repeat(1000)}tok`;
    const file = write('b.log', text);
    for (const chunkBytes of [7, 64, 1010, 1013, 1020, 4096]) {
      expect(createScanner([key, secret('x', 'tok')], { chunkBytes }).scanFile(file)).toEqual([
        expect.objectContaining({ kind: 'webhook-secret', count: 1 }),
      ]);
    }
    expect(createScanner([key]).scanFile(write('c.log', 'whsec_abcdefghijklmnopqrstuvwxy'))).toEqual([]);
  });
});
