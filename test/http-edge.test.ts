// What the HTTP edge adds to every answer and every operator request: no caching of answers that
// carry secrets, no content sniffing, and a throttle on wrong operator tokens.
import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../src/config.js';
import { UNAUTHENTICATED_DRAIN_BYTES } from '../src/http/drain-body.js';
import { MAX_PROVIDER_WEBHOOK_BYTES } from '../src/http/routes/provider-webhook-routes.js';
import {
  ADMIN_TOKEN,
  call,
  createTenant,
  eventually,
  type Service,
  startService,
  type Tenant,
} from './support/harness.js';

// One service for all but the connection cap (starting one is the slow part of this file); the
// operator throttle comes last, as it locks out this address's operator calls for a minute.
let svc: Service;
beforeAll(async () => {
  svc = await startService({
    role: 'api',
    resolve: async () => [{ address: '93.184.216.34', family: 4 }],
    env: {
      PROVIDER_APP_SECRET: 'provider-app-secret-0123456789',
      HEADERS_TIMEOUT_MS: '1000',
      KEEP_ALIVE_TIMEOUT_MS: '1000',
      BODY_READ_TIMEOUT_MS: '60000',
    },
  });
});
afterAll(async () => svc?.stop());

describe('answers carrying secrets', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await createTenant(svc.url, { plan: 'pro' });
  });

  const noStore = (res: { headers: Headers }) => {
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  };

  it('say Cache-Control: no-store and nosniff: endpoint create and rotate, key create, user invitations', async () => {
    const created = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: 'https://hooks.example.com/in' },
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    noStore(created);
    const rotated = await call(svc.url, 'POST', `/webhook-endpoints/${created.body.id}/rotate-secret`, { key: t.key });
    expect(rotated.status).toBe(200);
    noStore(rotated);
    const key = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/api-keys`, { admin: true, body: {} });
    expect(key.status).toBe(201);
    noStore(key);
    const user = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/users`, {
      admin: true,
      body: { email: 'owner@example.com' },
    });
    expect(user.status).toBe(201);
    noStore(user);
    const reset = await call(svc.url, 'POST', `/admin/portal-users/${user.body.id}/reset-password`, { admin: true });
    expect(reset.status).toBe(200);
    noStore(reset);
  });

  it('and so does every other API answer, errors included', async () => {
    noStore(await call(svc.url, 'GET', '/messages', { key: t.key }));
    noStore(await call(svc.url, 'GET', '/messages', { key: 'ak_live_wrong' }));
    noStore(await call(svc.url, 'GET', '/no-such-route', { key: t.key }));
  });
});

describe('provider webhooks', () => {
  const post = (body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(`${svc.url}/provider/webhooks/app`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00', ...headers },
      body,
      duplex: 'half',
    } as RequestInit);

  it('refuse a body over 1 MiB with 413 before any signature check, declared or chunked', async () => {
    expect(MAX_PROVIDER_WEBHOOK_BYTES).toBe(1024 * 1024);
    const big = Buffer.alloc(MAX_PROVIDER_WEBHOOK_BYTES + 1, 0x20);
    const declared = await post(big);
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({ error: 'payload_too_large' });
    const chunks = [Buffer.alloc(700 * 1024, 0x20), Buffer.alloc(700 * 1024, 0x20)];
    const chunked = await post(
      new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      }),
    );
    expect(chunked.status).toBe(413);
    await chunked.body?.cancel();
    // At the limit, the signature decides.
    const atLimit = await post(Buffer.alloc(MAX_PROVIDER_WEBHOOK_BYTES, 0x20));
    expect(atLimit.status).toBe(401);
    await atLimit.body?.cancel();
  });
});

/** A raw connection to `url`: what it received so far, and a promise of everything once it closes. */
function rawConnection(url: string, localAddress?: string) {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ port: Number(port), host: hostname, localAddress });
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => {});
  const text = () => Buffer.concat(chunks).toString('latin1');
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(text())));
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, text, closed, connected };
}

const GET_HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';

describe('connection limits', () => {
  it('default to a 10 s head, 5 s idle keep-alive, 1,024 connections and 512 from one address', () => {
    const config = loadConfig({});
    expect([
      config.headersTimeoutMs,
      config.keepAliveTimeoutMs,
      config.maxConnections,
      config.maxConnectionsPerAddress,
    ]).toEqual([10_000, 5_000, 1024, 512]);
    const server = svc.app.server!.server;
    expect([server.headersTimeout, server.keepAliveTimeout, server.requestTimeout]).toEqual([1000, 1000, 60_000]);
    expect(server.maxConnections).toBe(1024);
  });

  it('answer a head that does not arrive within HEADERS_TIMEOUT_MS with 408, not at BODY_READ_TIMEOUT_MS', async () => {
    const c = rawConnection(svc.url);
    await c.connected;
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const answer = await c.closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer.toLowerCase()).toContain('connection: close');
  });

  it('close a keep-alive connection after KEEP_ALIVE_TIMEOUT_MS idle', async () => {
    const c = rawConnection(svc.url);
    await c.connected;
    c.socket.write(GET_HEALTHZ);
    const answer = await c.closed; // nothing else is sent: the server ends the idle connection
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer.toLowerCase()).toContain('keep-alive');
  });

  it('answer 401 without reading a large body first, and close the connection', async () => {
    const c = rawConnection(svc.url);
    await c.connected;
    const size = 20 * 1024 * 1024;
    c.socket.write(
      `POST /media HTTP/1.1\r\nHost: x\r\nx-api-key: ak_live_wrong\r\n` +
        `Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: ${size}\r\n\r\n`,
    );
    c.socket.write(Buffer.alloc(2 * UNAUTHENTICATED_DRAIN_BYTES, 0x61));
    // The rest of the 20 MB never comes: the answer must not wait for it.
    const answer = await c.closed;
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer.toLowerCase()).toContain('connection: close');
  });
});

describe('connection cap', () => {
  let capped: Service;
  beforeAll(async () => {
    capped = await startService({ role: 'api', env: { MAX_CONNECTIONS: '3', KEEP_ALIVE_TIMEOUT_MS: '600000' } });
  });
  afterAll(async () => capped?.stop());

  it('closes connections beyond MAX_CONNECTIONS at once, and takes new ones when a place is free', async () => {
    const open = [rawConnection(capped.url), rawConnection(capped.url), rawConnection(capped.url)];
    for (const c of open) {
      await c.connected;
      c.socket.write(GET_HEALTHZ);
    }
    await eventually(async () => open.every((c) => c.text().startsWith('HTTP/1.1 200 ')));
    const extra = rawConnection(capped.url);
    extra.socket.write(GET_HEALTHZ);
    expect(await extra.closed).toBe('');
    open[0]!.socket.destroy();
    const server = capped.app.server!.server;
    await eventually(() => new Promise<boolean>((resolve) => server.getConnections((_err, n) => resolve(n < 3))));
    const next = rawConnection(capped.url);
    next.socket.write(GET_HEALTHZ);
    await eventually(async () => next.text().startsWith('HTTP/1.1 200 '));
    for (const c of [...open, next]) c.socket.destroy();
  });
});

describe('connection limit per address', () => {
  let limited: Service;
  beforeAll(async () => {
    limited = await startService({
      role: 'api',
      env: { MAX_CONNECTIONS_PER_ADDRESS: '3', KEEP_ALIVE_TIMEOUT_MS: '600000' },
    });
  });
  afterAll(async () => limited?.stop());

  /** Whether a new connection (from `localAddress`) gets /healthz answered, or is closed unanswered. */
  const served = (localAddress?: string) => {
    const c = rawConnection(limited.url, localAddress);
    c.socket.write(GET_HEALTHZ);
    const answered = new Promise<boolean>((resolve) => {
      c.socket.once('data', () => resolve(c.text().startsWith('HTTP/1.1 200 ')));
      void c.closed.then((text) => resolve(text.startsWith('HTTP/1.1 200 ')));
    });
    return { c, answered };
  };

  it("closes an address's connections beyond MAX_CONNECTIONS_PER_ADDRESS at once while other addresses are served", async () => {
    // Tests all come from loopback; 127.0.0.2 is another loopback address, another client here.
    const held = [served(), served(), served()];
    for (const h of held) expect(await h.answered).toBe(true);
    const extra = served();
    expect(await extra.answered).toBe(false);
    expect(await extra.c.closed).toBe('');
    const other = served('127.0.0.2');
    expect(await other.answered).toBe(true);
    // A place given back is taken again.
    held[0]!.c.socket.destroy();
    await eventually(async () => {
      const next = served();
      if (await next.answered) return (held[0] = next);
      return undefined;
    });
    for (const h of [...held, other]) h.c.socket.destroy();
  });
});

describe('operator token throttle', () => {
  const admin = (token: string) =>
    fetch(`${svc.url}/admin/customers`, { headers: { authorization: `Bearer ${token}` } });

  it(`refuses an address after ADMIN_MAX_FAILURES (default 10) wrong tokens with 429 and Retry-After, whatever it sends`, async () => {
    expect((await admin(ADMIN_TOKEN)).status).toBe(200);
    expect(svc.config.adminMaxFailures).toBe(10);
    for (let i = 0; i < 10; i++) {
      const res = await admin(`wrong-token-${i}-0123456789`);
      expect(res.status).toBe(401);
      await res.body?.cancel();
    }
    const refused = await admin('wrong-token-again-0123456789');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(await refused.json()).toMatchObject({ error: 'too_many_attempts' });
    // The right token from that address waits too: a guess that happens to be right learns nothing.
    const right = await admin(ADMIN_TOKEN);
    expect(right.status).toBe(429);
    await right.body?.cancel();
    // The portal-user routes share the same throttle.
    const users = await fetch(`${svc.url}/admin/portal-users/00000000-0000-4000-8000-000000000000/disable`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(users.status).toBe(429);
    await users.body?.cancel();
  });
});
