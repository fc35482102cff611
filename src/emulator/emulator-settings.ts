// PUT /__emulator/settings: receipt settings, latency, default throughput, the pair rate limit,
// and where webhooks go and what signs them (docs/emulator.md).
import type { FastifyInstance } from 'fastify';

import type { EmulatorState, ReceiptSettings } from './emulator-state.js';
import type { WebhookTarget } from './emulator-webhook-sender.js';

export function registerSettingsControl(app: FastifyInstance, state: EmulatorState, target: WebhookTarget): void {
  app.put<{
    Body: Partial<ReceiptSettings> & {
      latencyMs?: number;
      defaultThroughputMps?: number;
      pairRateLimit?: boolean;
      pairRateWindowMs?: number;
      callbackUrl?: string;
      appSecret?: string;
    };
  }>('/__emulator/settings', async (request) => {
    const {
      latencyMs,
      defaultThroughputMps,
      pairRateLimit,
      pairRateWindowMs,
      callbackUrl: cb,
      appSecret: secret,
      ...receipts
    } = request.body ?? {};
    Object.assign(state.receipts, receipts);
    if (latencyMs !== undefined) state.latencyMs = latencyMs;
    if (defaultThroughputMps !== undefined) state.defaultThroughputMps = defaultThroughputMps;
    if (pairRateLimit !== undefined) state.pairRateLimit = pairRateLimit;
    if (pairRateWindowMs !== undefined) state.pairRateWindowMs = pairRateWindowMs;
    if (cb !== undefined) target.callbackUrl = cb;
    if (secret !== undefined) target.appSecret = secret;
    return {
      receipts: state.receipts,
      latencyMs: state.latencyMs,
      defaultThroughputMps: state.defaultThroughputMps,
      pairRateLimit: state.pairRateLimit,
      pairRateWindowMs: state.pairRateWindowMs,
      callbackUrl: target.callbackUrl,
    };
  });
}
