// The pipeline bench's load generator, in its own process: autocannon posts `amount` messages to
// POST /messages over `connections` connections, the senders taken in turn (an API key and the
// chat account to send from), a unique externalId each; with several API processes the
// connections are split between them. Input: BENCH_LOAD (JSON); output: one JSON line on stdout.
import autocannon, { type Result } from 'autocannon';

type Sender = { key: string; chatAccountId?: string };
type LoadSpec = { urls: string[]; senders: Sender[]; connections: number; amount: number; prefix: string };
const spec = JSON.parse(process.env.BENCH_LOAD ?? '') as LoadSpec;

let n = 0;
const run = (url: string, connections: number, amount: number) =>
  autocannon({
    url,
    connections,
    amount,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: '/messages',
        setupRequest: (req) => {
          const i = n++;
          const sender = spec.senders[i % spec.senders.length]!;
          return {
            ...req,
            headers: { ...req.headers, 'content-type': 'application/json', 'x-api-key': sender.key },
            body: JSON.stringify({
              externalId: `${spec.prefix}-${i}`,
              ...(sender.chatAccountId ? { chatAccountId: sender.chatAccountId } : {}),
              to: { type: 'phone', phoneE164: '+15551234567' },
              content: { type: 'text', text: 'hello from the benchmark' },
            }),
          };
        },
      },
    ],
  });

const startedAt = Date.now();
const cpuAtStart = process.cpuUsage();
const parts = spec.urls.length;
const results = await Promise.all(
  spec.urls.map((url, i) =>
    run(
      url,
      Math.floor(spec.connections / parts) + (i < spec.connections % parts ? 1 : 0),
      Math.floor(spec.amount / parts) + (i < spec.amount % parts ? 1 : 0),
    ),
  ),
);
const endedAt = Date.now();
const cpu = process.cpuUsage(cpuAtStart);

// One histogram per autocannon run: with several, the p99 reported is the worst of them.
const sum = (f: (r: Result) => number) => results.reduce((a, r) => a + f(r), 0);
const max = (f: (r: Result) => number) => Math.max(...results.map(f));
const statusCodes: Record<string, number> = {};
for (const r of results)
  for (const [code, st] of Object.entries(r.statusCodeStats ?? {}))
    statusCodes[code] = (statusCodes[code] ?? 0) + st.count;
const ok2xx = sum((r) => r['2xx']);
console.log(
  JSON.stringify({
    startedAt,
    endedAt,
    requests: sum((r) => r.requests.total),
    requestsPerSec: ((ok2xx + sum((r) => r.non2xx)) * 1000) / (endedAt - startedAt),
    latencyMs: {
      p50: max((r) => r.latency.p50),
      p90: max((r) => r.latency.p90),
      p99: max((r) => r.latency.p99),
      max: max((r) => r.latency.max),
      mean:
        sum((r) => r.latency.mean * r.requests.total) /
        Math.max(
          1,
          sum((r) => r.requests.total),
        ),
    },
    ok2xx,
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    statusCodes,
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
  }),
);
