// The load generator, run in its own process: autocannon against POST /messages, a unique
// externalId per request and the API keys taken in turn. Input: BENCH_LOAD (JSON); output: one
// JSON line on stdout.
import autocannon from 'autocannon';

type LoadSpec = { url: string; keys: string[]; connections: number; duration: number; warmup: number };
const spec = JSON.parse(process.env.BENCH_LOAD ?? '') as LoadSpec;

// Unique across runs and across the warm-up and the measured run (the counter carries on).
const prefix = `b${Date.now().toString(36)}${process.pid.toString(36)}`;
let n = 0;

const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.duration,
  warmup: spec.warmup > 0 ? { connections: spec.connections, duration: spec.warmup } : undefined,
  timeout: 10,
  requests: [
    {
      method: 'POST',
      path: '/messages',
      setupRequest: (req) => {
        const i = n++;
        return {
          ...req,
          headers: {
            ...req.headers,
            'content-type': 'application/json',
            'x-api-key': spec.keys[i % spec.keys.length]!,
          },
          body: JSON.stringify({
            externalId: `${prefix}-${i}`,
            to: { type: 'phone', phoneE164: '+15551234567' },
            content: { type: 'text', text: 'hello from the benchmark' },
          }),
        };
      },
    },
  ],
});

const statusCodes = Object.fromEntries(
  Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]),
);
console.log(
  JSON.stringify({
    requestsPerSec: result.requests.average,
    requestsTotal: result.requests.total,
    durationSec: result.duration,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.mean,
    },
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    warmup2xx: result.warmup?.['2xx'] ?? 0,
    warmupNon2xx: result.warmup?.non2xx ?? 0,
    warmupErrors: result.warmup?.errors ?? 0,
  }),
);
