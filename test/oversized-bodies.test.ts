// Bodies over a limit: a client still writing its body must be able to read the 413, over
// keep-alive connections too (undici fetch and request, node:http with a keep-alive agent). The
// clients run in a process of their own, as real ones do (see test/support/oversized-client.ts).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTenant, type Service, startService } from './support/harness.js';

const client = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support', 'oversized-client.ts');

describe('bodies over the limit', () => {
  let svc: Service;
  let key: string;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
    ({ key } = await createTenant(svc.url, { plan: 'starter' }));
  });
  afterAll(() => svc.stop());

  it('a client streaming 25 MB to POST /media, or 1.5 MB of JSON to POST /messages, reads the 413 and may keep its connection', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', client, JSON.stringify({ url: svc.url, key, rounds: 3 })],
      { timeout: 150_000, maxBuffer: 1024 * 1024 },
    );
    const outcomes = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { client: string; status?: number; error?: string; connection?: string });
    expect(outcomes).toHaveLength(3 * 2 * 4);
    // Every answer is read, and as the rest of the body was read (it is within twice the limit),
    // the connection stays usable: no `connection: close`.
    const unread = outcomes.filter(
      (o) =>
        o.status !== 413 ||
        o.error !== (o.client.includes('/media') ? 'media_too_large' : 'payload_too_large') ||
        o.connection === 'close',
    );
    expect(unread).toEqual([]);
  }, 180_000);
});
