// The emulator's receipt POSTs: the cap on POSTs in flight, the per-number callback URL, the counters.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { createEmulator } from './emulator-server.js';

type Hook = { url: string; bodies: string[]; maxConcurrent: number; close(): Promise<void> };

/** A callback that answers 200 after `holdMs`, recording the most requests it held at once. */
async function callback(holdMs: number): Promise<Hook> {
  const bodies: string[] = [];
  let open = 0;
  const hook = { bodies, maxConcurrent: 0 } as Hook;
  const server = http.createServer((req, res) => {
    open++;
    hook.maxConcurrent = Math.max(hook.maxConcurrent, open);
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      setTimeout(() => {
        open--;
        res.writeHead(200).end('{}');
      }, holdMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hook.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  hook.close = () => new Promise<void>((r) => server.close(() => r()));
  return hook;
}

const toClose: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (toClose.length > 0) await toClose.pop()!();
});

async function send(app: ReturnType<typeof createEmulator>['app'], phoneNumberId: string, i: number) {
  const res = await app.inject({
    method: 'POST',
    url: `/v23.0/${phoneNumberId}/messages`,
    headers: { authorization: 'Bearer t' },
    payload: { messaging_product: 'whatsapp', to: `1555000${1000 + i}`, type: 'text', text: { body: 'x' } },
  });
  expect(res.statusCode).toBe(200);
}

describe('emulator webhooks', () => {
  it('keeps at most maxInFlight POSTs open, one status per POST, and counts them', async () => {
    const hook = await callback(30);
    toClose.push(hook.close);
    const { app, state } = createEmulator({ callbackUrl: hook.url, appSecret: 's' });
    toClose.push(() => app.close());
    await app.inject({
      method: 'PUT',
      url: '/__emulator/settings',
      payload: { statuses: ['sent', 'delivered', 'read'], delayMs: 0, maxInFlight: 2 },
    });
    for (let i = 0; i < 6; i++) await send(app, 'p1', i);
    while (state.webhookStats.posts < 18 || hook.bodies.length < 18) await new Promise((r) => setTimeout(r, 20));
    expect(hook.maxConcurrent).toBe(2);
    const stats = (await app.inject({ method: 'GET', url: '/__emulator/stats' })).json();
    expect(stats).toMatchObject({ sent: 6, webhooks: { posts: 18, retries: 0, failures: 0 } });
  });

  it("posts a number's webhooks to its own callback URL when it has one", async () => {
    const appHook = await callback(0);
    const own = await callback(0);
    toClose.push(appHook.close, own.close);
    const { app, state } = createEmulator({ callbackUrl: appHook.url, appSecret: null });
    toClose.push(() => app.close());
    await app.inject({ method: 'PUT', url: '/__emulator/settings', payload: { statuses: ['sent'], delayMs: 0 } });
    await app.inject({ method: 'PUT', url: '/__emulator/numbers/p2', payload: { callbackUrl: own.url } });
    await send(app, 'p1', 1);
    await send(app, 'p2', 2);
    while (state.webhookStats.posts < 2 || appHook.bodies.length + own.bodies.length < 2)
      await new Promise((r) => setTimeout(r, 20));
    expect(appHook.bodies.map((b) => b.includes('"phone_number_id":"p1"'))).toEqual([true]);
    expect(own.bodies.map((b) => b.includes('"phone_number_id":"p2"'))).toEqual([true]);
  });
});
