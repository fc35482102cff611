// The customers' webhook endpoints for the pipeline bench, in a process of its own: POST /hook/<n>
// checks the x-svc-signature with endpoint n's secret (the way docs/api.md tells a customer to),
// answers 204 at once and counts the events by event id and by message and status.
//   PUT /__secrets {"/hook/0": "whsec_…", …}   the endpoints' secrets (shown once at creation)
//   GET /__stats                               counters (below); DELETE /__stats zeroes them
import http from 'node:http';

import { verifyWebhookSignature } from '../src/webhooks/signature.js';

const STATUS_BIT: Record<string, number> = { sent: 1, delivered: 2, read: 4, failed: 8 };
let secrets = new Map<string, string>();

function fresh() {
  return {
    received: 0,
    duplicates: 0,
    badSignature: 0,
    badBody: 0,
    /** The same message and status in two events with different ids. */
    statusRepeated: 0,
    byStatus: {} as Record<string, number>,
    firstAt: 0,
    lastAt: 0,
    lastReadAt: 0,
    eventIds: new Set<string>(),
    messages: new Map<string, number>(),
  };
}
let s = fresh();

function summary() {
  let read = 0;
  let complete = 0;
  for (const bits of s.messages.values()) {
    if (bits & 4) read++;
    if ((bits & 7) === 7) complete++;
  }
  const { eventIds, messages, ...counters } = s;
  return {
    ...counters,
    unique: eventIds.size,
    messages: messages.size,
    messagesRead: read,
    messagesComplete: complete,
  };
}

function handle(path: string, raw: Buffer, signature: string | undefined) {
  const now = Date.now();
  s.received++;
  if (s.firstAt === 0) s.firstAt = now;
  s.lastAt = now;
  const secret = secrets.get(path);
  if (secret === undefined || !verifyWebhookSignature(raw, signature, secret)) {
    s.badSignature++;
    return;
  }
  let event: { eventId?: string; type?: string; data?: { messageId?: string; status?: string } };
  try {
    event = JSON.parse(raw.toString('utf8')) as typeof event;
  } catch {
    s.badBody++;
    return;
  }
  if (typeof event.eventId !== 'string') {
    s.badBody++;
    return;
  }
  if (s.eventIds.has(event.eventId)) {
    s.duplicates++;
    return;
  }
  s.eventIds.add(event.eventId);
  if (event.type !== 'message.status' || !event.data?.messageId || !event.data.status) return;
  const { messageId, status } = event.data;
  s.byStatus[status] = (s.byStatus[status] ?? 0) + 1;
  const bit = STATUS_BIT[status] ?? 0;
  const had = s.messages.get(messageId) ?? 0;
  if (had & bit) s.statusRepeated++;
  s.messages.set(messageId, had | bit);
  if (status === 'read') s.lastReadAt = now;
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (req.url === '/healthz') return void res.writeHead(200).end('{"status":"ok"}');
    if (req.url === '/__stats' && req.method === 'GET')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(summary()));
    if (req.url === '/__stats' && req.method === 'DELETE') {
      s = fresh();
      return void res.writeHead(204).end();
    }
    if (req.url === '/__secrets' && req.method === 'PUT') {
      secrets = new Map(Object.entries(JSON.parse(body.toString('utf8')) as Record<string, string>));
      return void res.writeHead(204).end();
    }
    if (req.method === 'POST' && req.url?.startsWith('/hook/')) {
      const sig = req.headers['x-svc-signature'];
      handle(req.url, body, typeof sig === 'string' ? sig : undefined);
      return void res.writeHead(204).end();
    }
    res.writeHead(404).end();
  });
});
server.keepAliveTimeout = 30_000;
process.once('SIGTERM', () => process.exit(0));
server.listen(Number(process.env.PORT), '127.0.0.1');
