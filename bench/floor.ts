// The floor of the lifecycle (issue #26): what bare Node spends on the eight HTTP exchanges of one
// message, with no framework and no database. Two processes, as in the pipeline bench:
//   MODE=service: a node:http server and an undici client over keep-alive, standing in for the
//     service. POST /messages: parse, answer 202, call the provider (POST, JSON both ways).
//     POST /receipts: parse, answer 200, post one signed event to the receiver. Its own CPU
//     (process.cpuUsage) is read and reset over GET/DELETE /__cpu: the figure the report uses.
//   MODE=driver: the load (the accepted request, over BENCH_CONNECTIONS), the provider (answers at
//     once, then posts sent, delivered, read in turn, each after the previous was answered) and the
//     receiver (counts events, checks signatures). After a warm-up of up to 200 messages, measures
//     MESSAGES and prints one JSON line when every event arrived.
// The same shapes of body (a message request, a provider webhook with one status, an event
// envelope) and an HMAC-SHA256 signature per event, so per exchange the work is comparable.
import crypto from 'node:crypto';
import http from 'node:http';

import { Agent, request } from 'undici';

const SECRET = 'floor-secret';
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 128, pipelining: 1 });

function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      } catch (err) {
        reject(err as Error);
      }
    });
    req.on('error', reject);
  });
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  const res = await request(url, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', ...headers },
    body: text,
  });
  const answer = await res.body.text();
  return { status: res.statusCode, body: answer === '' ? null : (JSON.parse(answer) as Record<string, unknown>) };
}

const send = (res: http.ServerResponse, status: number, body?: unknown) => {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
};

function service(port: number, peer: string) {
  let cpu0 = process.cpuUsage();
  const server = http.createServer((req, res) => {
    if (req.url === '/__cpu') {
      if (req.method === 'DELETE') cpu0 = process.cpuUsage();
      const u = process.cpuUsage(cpu0);
      return send(res, 200, { ms: (u.user + u.system) / 1000 });
    }
    readJson(req)
      .then(async (body) => {
        if (req.url === '/messages') {
          const id = crypto.randomUUID();
          send(res, 202, { id, status: 'queued', to: body.to, createdAt: new Date().toISOString() });
          const sent = await post(`${peer}/provider`, {
            messaging_product: 'whatsapp',
            to: body.to,
            type: 'text',
            text: { body: (body.text as { body: string }).body },
            biz_opaque_callback_data: id,
          });
          if (sent.status !== 200) throw new Error(`provider answered ${sent.status}`);
        } else if (req.url === '/receipts') {
          const change = (body.entry as { changes: { value: { statuses: Record<string, unknown>[] } }[] }[])[0]!
            .changes[0]!.value.statuses[0]!;
          send(res, 200, { received: true });
          const event = {
            id: crypto.randomUUID(),
            type: 'message.status',
            createdAt: new Date().toISOString(),
            data: { messageId: change.biz_opaque_callback_data, status: change.status, at: change.timestamp },
          };
          const text = JSON.stringify(event);
          const t = Math.floor(Date.now() / 1000);
          const sig = crypto.createHmac('sha256', SECRET).update(`${t}.${text}`).digest('hex');
          const res2 = await request(`${peer}/events`, {
            method: 'POST',
            dispatcher: agent,
            headers: { 'content-type': 'application/json', 'x-signature': `t=${t},v1=${sig}` },
            body: text,
          });
          await res2.body.dump();
        } else send(res, 404, { error: 'not_found' });
      })
      .catch((err: unknown) => {
        if (!res.headersSent) send(res, 400, { error: String(err) });
        else console.error(err);
      });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(port, '127.0.0.1');
}

async function driver(port: number, target: string, messages: number, connections: number) {
  const statuses = ['sent', 'delivered', 'read'] as const;
  const seen = new Map<string, number>();
  let events = 0;
  let expectedEvents = 0;
  let badSignatures = 0;
  let done: () => void = () => {};
  const receipts = async (to: string, id: string) => {
    for (const status of statuses)
      await post(`${target}/receipts`, {
        object: 'whatsapp_business_account',
        entry: [
          {
            id: 'waba',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { phone_number_id: 'floor', display_phone_number: '+15550000000' },
                  statuses: [
                    {
                      id: `wamid.${id}`,
                      status,
                      timestamp: String(Date.now()),
                      recipient_id: to,
                      biz_opaque_callback_data: id,
                    },
                  ],
                },
              },
            ],
          },
        ],
      });
  };
  const server = http.createServer((req, res) => {
    readJson(req)
      .then((body) => {
        if (req.url === '/provider') {
          const id = body.biz_opaque_callback_data as string;
          send(res, 200, { messaging_product: 'whatsapp', messages: [{ id: `wamid.${id}` }] });
          void receipts(body.to as string, id);
        } else {
          const sig = /t=(\d+),v1=([0-9a-f]+)/.exec(String(req.headers['x-signature']));
          const expected = crypto
            .createHmac('sha256', SECRET)
            .update(`${sig?.[1]}.${JSON.stringify(body)}`)
            .digest('hex');
          if (sig?.[2] !== expected) badSignatures++;
          const id = (body.data as { messageId: string }).messageId;
          seen.set(id, (seen.get(id) ?? 0) + 1);
          res.writeHead(204).end();
          if (++events === expectedEvents) done();
        }
      })
      .catch(() => send(res, 400, {}));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  /** Posts n messages and waits for their 3 n events. */
  const phase = async (n: number, prefix: string) => {
    events = 0;
    badSignatures = 0;
    expectedEvents = n * 3;
    seen.clear();
    const finished = new Promise<void>((r) => (done = r));
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(connections, n) }, async () => {
        while (next < n) {
          const i = next++;
          const r = await post(`${target}/messages`, {
            to: `+1555${String(i).padStart(7, '0')}`,
            text: { body: `floor ${prefix}${i}` },
          });
          if (r.status !== 202) throw new Error(`accept answered ${r.status}`);
        }
      }),
    );
    const timeout = setTimeout(() => done(), 120_000 + n * 20);
    await finished;
    clearTimeout(timeout);
  };
  // A warm-up, as the service gets one: the code is compiled and the connections open before measuring.
  await phase(Math.min(200, messages), 'w');
  await request(`${target}/__cpu`, { method: 'DELETE', dispatcher: agent }).then((r) => r.body.dump());
  const startedAt = Date.now();
  const cpu0 = process.cpuUsage();
  await phase(messages, 'm');
  const service = await request(`${target}/__cpu`, { dispatcher: agent });
  const serviceMs = ((await service.body.json()) as { ms: number }).ms;
  const u = process.cpuUsage(cpu0);
  console.log(
    JSON.stringify({
      messages,
      events,
      messagesWithThreeEvents: [...seen.values()].filter((n) => n === 3).length,
      badSignatures,
      seconds: (Date.now() - startedAt) / 1000,
      serviceCpuMs: serviceMs,
      driverCpuMs: (u.user + u.system) / 1000,
    }),
  );
  process.exit(events === messages * 3 ? 0 : 1);
}

const port = Number(process.env.PORT);
if (process.env.MODE === 'service') service(port, process.env.PEER_URL!);
else
  void driver(
    port,
    process.env.TARGET_URL!,
    Number(process.env.MESSAGES ?? 1000),
    Number(process.env.CONNECTIONS ?? 100),
  ).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
