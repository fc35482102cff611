// The customer's CLI run as a program against a real service (issue #36 part 4, decision 0072):
// `send` then `messages get` reaches the message; `listen --forward-to` posts each event of a
// send made while it listens to a local receiver, signed as webhook deliveries are with the
// secret it printed; errors are one line with their exit code; and GET /events/stream itself:
// sandbox keys see only sandbox events, live keys need a plan with webhooks, at most 3 streams
// per customer, Last-Event-ID resumes after an event.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ChatGate, type StreamedEvent } from '../packages/client/src/index.js';
import { verifyWebhookSignature } from '../src/webhooks/signature.js';
import { chatgateArgs } from './support/cli-build.js';
import { call, createTenant, eventually, type Service, startService, type Tenant } from './support/harness.js';
import { type Receiver, startReceiver } from './support/receiver.js';

const run = promisify(execFile);

describe('chatgate send, messages, listen (a customer with an API key)', () => {
  let svc: Service;
  let free: Tenant;
  let basic: Tenant;
  let receiver: Receiver;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    svc = await startService();
    free = await createTenant(svc.url, { plan: 'free' });
    basic = await createTenant(svc.url, { plan: 'basic' });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGTERM');
    await receiver.close();
    await svc.stop();
  });

  /** Runs `chatgate ...` to its end: exit code, stdout, stderr. */
  async function chatgate(env: Record<string, string>, ...args: string[]) {
    try {
      const r = await run(process.execPath, chatgateArgs(...args), {
        env: { ...process.env, CHATGATE_URL: svc.url, CHATGATE_API_KEY: '', ...env },
        timeout: 90_000,
      });
      return { code: 0, out: r.stdout, err: r.stderr };
    } catch (e) {
      const x = e as { code: number; stdout: string; stderr: string };
      return { code: x.code, out: x.stdout, err: x.stderr };
    }
  }

  /** Starts `chatgate listen ...`; resolves once it says it is ready, with the secret it printed. */
  async function listen(key: string, ...args: string[]) {
    const child = spawn(process.execPath, chatgateArgs('listen', ...args), {
      env: { ...process.env, CHATGATE_URL: svc.url, CHATGATE_API_KEY: key },
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const secret = await eventually(async () => /signing secret is (whsec_\S+)/.exec(err)?.[1], 60_000);
    return { child, secret, out: () => out, err: () => err };
  }

  it('send then messages get and messages list reach the message', async () => {
    const env = { CHATGATE_API_KEY: free.sandboxKey };
    const sent = await chatgate(env, 'send', '--to', '+15551230001', '--text', 'hi from the CLI', '--quiet');
    expect(sent).toMatchObject({ code: 0, err: '' });
    const id = sent.out.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const got = await chatgate(env, 'messages', 'get', id, '--json');
    expect(got.code).toBe(0);
    expect(JSON.parse(got.out)).toMatchObject({ messageId: id, recipient: '+15551230001', sandbox: true });
    const view = await chatgate(env, 'messages', 'get', id);
    expect(view.out).toMatch(new RegExp(`^messageId +${id}$`, 'm'));
    const listed = await chatgate(env, 'messages', 'list', '--limit', '5');
    expect(listed.code).toBe(0);
    expect(listed.out.split('\n')[0]).toMatch(new RegExp(`^${id}  \\w+  \\+15551230001  `));
  });

  it('errors are one line on stderr with their exit code', async () => {
    const env = { CHATGATE_API_KEY: free.sandboxKey };
    const invalid = await chatgate(env, 'send', '--to', '12', '--text', 'x');
    expect(invalid).toMatchObject({ code: 1, out: '' });
    expect(invalid.err).toMatch(/^error: 400 validation_error: \S*to\.phoneE164 [^\n]+\n$/);
    const missing = await chatgate(env, 'messages', 'get', 'no-such-message');
    expect(missing).toMatchObject({ code: 1, err: 'error: 404 message_not_found\n' });
    const badKey = await chatgate({ CHATGATE_API_KEY: 'ak_test_nope' }, 'messages', 'list');
    expect(badKey.code).toBe(1);
    expect(badKey.err).toMatch(/^error: 401 Invalid API key: [^\n]+\n$/);
    const noKey = await chatgate({}, 'send', '--to', '+15551230001', '--text', 'x');
    expect(noKey.code).toBe(2);
    expect(noKey.err).toMatch(/^chatgate send: no API key: pass --api-key KEY or set CHATGATE_API_KEY [^\n]+\n$/);
    const usage = await chatgate(env, 'messages', 'list', '--frobnicate');
    expect(usage).toMatchObject({
      code: 2,
      err: expect.stringMatching(/^chatgate messages list: unknown option --frobnicate/),
    });
    const away = await chatgate({ ...env, CHATGATE_URL: 'http://127.0.0.1:9' }, 'messages', 'list');
    expect(away.code).toBe(4);
    expect(away.err).toMatch(/^error: cannot reach the service at http:\/\/127\.0\.0\.1:9 [^\n]+\n$/);
    // A live key on a plan without webhooks may not listen: the answer, one line, exit 1.
    const refused = await chatgate({ CHATGATE_API_KEY: free.key }, 'listen');
    expect(refused).toMatchObject({ code: 1, err: 'error: 403 feature_not_available: plan free\n' });
  });

  it('every command has examples in its --help', async () => {
    for (const words of [['send'], ['messages', 'get'], ['messages', 'list'], ['listen']]) {
      const r = await chatgate({}, ...words, '--help');
      expect(r.code).toBe(0);
      expect(r.out).toMatch(new RegExp(`^usage: chatgate ${words.join(' ')} `));
      expect(r.out).toMatch(new RegExp(`\\nexamples:\\n  chatgate ${words.join(' ')}`));
    }
  });

  it('listen --forward-to posts each event of a send made while listening, signed with the secret it printed', async () => {
    const l = await listen(free.sandboxKey, '--forward-to', `${receiver.url}/hook`);
    expect(l.secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    const sent = await chatgate(
      { CHATGATE_API_KEY: free.sandboxKey },
      'send',
      '--to',
      '+15551230002',
      '--text',
      'hi',
      '-q',
    );
    const id = sent.out.trim();
    const delivered = await eventually(
      async () => receiver.requests.find((r) => r.body.includes(id) && JSON.parse(r.body).data.status === 'delivered'),
      60_000,
    );
    expect(delivered.path).toBe('/hook');
    expect(delivered.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'ChatGate-Webhooks/1.0',
      'x-svc-event': 'message.status',
    });
    const envelope = JSON.parse(delivered.body);
    expect(envelope).toMatchObject({ type: 'message.status', data: { messageId: id, status: 'delivered' } });
    expect(delivered.headers['x-svc-event-id']).toBe(envelope.eventId);
    const signature = delivered.headers['x-svc-signature'] as string;
    expect(verifyWebhookSignature(delivered.rawBody, signature, l.secret)).toBe(true);
    expect(verifyWebhookSignature(delivered.rawBody, signature, 'whsec_other')).toBe(false);
    // It printed what it forwarded.
    await eventually(async () => l.out().includes(`${envelope.eventId}  --> POST ${receiver.url}/hook [200]`));
    l.child.kill('SIGINT');
  }, 120_000);

  it('a sandbox key streams only sandbox events, a live key every event (as webhook endpoints get them)', async () => {
    const live = new ChatGate({ apiKey: basic.key, baseUrl: svc.url });
    const sandbox = new ChatGate({ apiKey: basic.sandboxKey, baseUrl: svc.url });
    const stop = new AbortController();
    const seen = { live: [] as StreamedEvent[], sandbox: [] as StreamedEvent[] };
    const read = async (c: ChatGate, into: StreamedEvent[]) => {
      try {
        for await (const e of c.streamEvents({}, { signal: stop.signal })) into.push(e);
      } catch {
        // aborted at the end
      }
    };
    const readers = [read(live, seen.live), read(sandbox, seen.sandbox)];
    // Both streams are open once they hold their leases (the first line is written after).
    await eventually(async () => {
      const [row] = await svc.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM event_streams WHERE customer_id = $1',
        [basic.customerId],
      );
      return row?.n === 2;
    });
    const liveSend = await call(svc.url, 'POST', '/messages', {
      key: basic.key,
      body: {
        externalId: 'live-1',
        to: { type: 'phone', phoneE164: '+15551230003' },
        content: { type: 'text', text: 'x' },
      },
    });
    // The live message fails (no provider here): its event reaches the live stream.
    const liveId = liveSend.body.messageId as string;
    await eventually(
      async () => seen.live.some((e) => (e.event.data as { messageId?: string }).messageId === liveId),
      60_000,
    );
    const sandboxSend = await call(svc.url, 'POST', '/messages', {
      key: basic.sandboxKey,
      body: {
        externalId: 'sb-1',
        to: { type: 'phone', phoneE164: '+15551230003' },
        content: { type: 'text', text: 'x' },
      },
    });
    const sandboxId = sandboxSend.body.messageId as string;
    const of = (list: StreamedEvent[], id: string) =>
      list.filter((e) => (e.event.data as { messageId?: string }).messageId === id);
    await eventually(async () => of(seen.sandbox, sandboxId).length > 0 && of(seen.live, sandboxId).length > 0, 60_000);
    // The sandbox stream read past the live message's events and sent none of them.
    expect(of(seen.sandbox, liveId)).toEqual([]);
    expect(seen.sandbox.every((e) => e.type === 'message.status')).toBe(true);
    stop.abort();
    await Promise.all(readers);
    // Their leases are freed when the streams end.
    await eventually(async () => {
      const [row] = await svc.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM event_streams WHERE customer_id = $1',
        [basic.customerId],
      );
      return row?.n === 0;
    });

    // Last-Event-ID: a new stream resumes after the live message's first event.
    const first = of(seen.live, liveId)[0]!;
    const resumed: StreamedEvent[] = [];
    const again = new AbortController();
    const reading = (async () => {
      try {
        for await (const e of live.streamEvents({ lastEventId: first.id }, { signal: again.signal })) {
          resumed.push(e);
          if ((e.event.data as { messageId?: string }).messageId === sandboxId) again.abort();
        }
      } catch {
        // aborted
      }
    })();
    await reading;
    const expected = seen.live.slice(seen.live.indexOf(first) + 1).map((e) => e.id);
    expect(resumed.map((e) => e.id)).toEqual(expected.slice(0, resumed.length));
    expect(resumed.map((e) => e.id)).not.toContain(first.id);
    expect(resumed.length).toBeGreaterThan(0);
  }, 180_000);

  it('at most 3 streams per customer are open at once, on all API processes; a closed one frees its place', async () => {
    // A second API process on the same database.
    const other = await startService({ role: 'api', database: svc.database });
    const open = (key: string, url = svc.url) =>
      fetch(`${url}/events/stream`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(60_000) });
    const streams = [];
    for (let i = 0; i < 3; i++) {
      const res = await open(basic.sandboxKey, i === 2 ? other.url : svc.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      streams.push(res);
    }
    for (const url of [svc.url, other.url]) {
      const fourth = await open(basic.key, url);
      expect(fourth.status).toBe(429);
      expect(await fourth.json()).toMatchObject({ error: 'stream_limit', limit: 3 });
    }
    await streams[0]!.body!.cancel();
    const fifth = await eventually(async () => {
      const res = await open(basic.key);
      if (res.status === 200) return res;
      await res.body?.cancel();
      return undefined;
    }, 30_000);
    for (const s of [...streams.slice(1), fifth]) await s.body!.cancel();
    await other.stop();
    // A key scoped to one account may not listen, as it may not manage webhooks.
    const scoped = await call(svc.url, 'POST', `/admin/customers/${basic.customerId}/api-keys`, {
      admin: true,
      body: { chatAccountId: basic.accountId },
    });
    const refused = await open(scoped.body.key);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'key_scope_insufficient' });
  });
});

describe('GET /events/stream and a stopping service', () => {
  it('a stopping service ends its open streams instead of waiting for them', async () => {
    const own = await startService({ role: 'api' });
    const tenant = await createTenant(own.url, { plan: 'free' });
    const res = await fetch(`${own.url}/events/stream`, { headers: { 'x-api-key': tenant.sandboxKey } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toMatch(/^: chatgate event stream\nretry: 2000\n\n/);
    const stopped = own.stop();
    // The stream ends (its body is done) and the stop completes, well before SHUTDOWN_TIMEOUT_MS.
    for (;;) if ((await reader.read()).done) break;
    await stopped;
  }, 60_000);
});
