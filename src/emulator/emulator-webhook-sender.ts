// Webhook POSTs from the emulated provider to the service: one keep-alive pool, signed with the app
// secret, a cap on POSTs in flight (`receipts.maxInFlight`) and a few quick retries.
import crypto from 'node:crypto';

import type { FastifyInstance } from 'fastify';
import { Agent, request as httpRequest } from 'undici';

import { sleep } from './emulator-common.js';
import type { EmulatorState } from './emulator-state.js';

/** Where webhooks go and what signs them; PUT /__emulator/settings changes both. */
export type WebhookTarget = { callbackUrl: string | null; appSecret: string | null };

export type WebhookSender = {
  target: WebhookTarget;
  /** Posts one webhook (to the number's own callback URL when it has one); the final HTTP status, or null. */
  post(payload: unknown, phoneNumberId?: string): Promise<number | null>;
  /** Webhook POSTs in flight and waiting for a slot. */
  queue(): { inFlight: number; waiting: number };
};

/** Webhook POSTs in flight, and those waiting for a slot when `receipts.maxInFlight` caps them. */
function createPostSlots(state: EmulatorState) {
  let posting = 0;
  const waiting: (() => void)[] = [];
  return {
    async take(): Promise<boolean> {
      const limit = state.receipts.maxInFlight;
      if (!(limit > 0)) return false;
      while (posting >= state.receipts.maxInFlight) await new Promise<void>((r) => waiting.push(r));
      posting++;
      return true;
    },
    release(held: boolean) {
      if (!held) return;
      posting--;
      waiting.shift()?.();
    },
    queue: () => ({ inFlight: posting, waiting: waiting.length }),
  };
}

export function createWebhookSender(app: FastifyInstance, state: EmulatorState, target: WebhookTarget): WebhookSender {
  // Webhook POSTs go through one keep-alive pool (undici's request: the global fetch costs
  // several times the CPU per POST, which in a bench is taken from the service under test).
  const webhookAgent = new Agent({ connections: 256, headersTimeout: 10_000, bodyTimeout: 10_000 });
  let closed = false;
  app.addHook('onClose', async () => {
    closed = true; // webhooks still being retried give up instead of failing on the closed pool
    await webhookAgent.destroy();
  });
  const slots = createPostSlots(state);

  async function post(payload: unknown, phoneNumberId?: string): Promise<number | null> {
    const url =
      (phoneNumberId !== undefined ? state.numbers.get(phoneNumberId)?.callbackUrl : undefined) ?? target.callbackUrl;
    if (!url) return null;
    const raw = JSON.stringify(payload);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (target.appSecret)
      headers['x-hub-signature-256'] =
        `sha256=${crypto.createHmac('sha256', target.appSecret).update(raw).digest('hex')}`;
    const stats = state.webhookStats;
    // The provider re-delivers on failure; a few quick tries are enough here.
    for (let attempt = 0; attempt < 5 && !closed; attempt++) {
      if (attempt > 0) stats.retries++;
      const held = await slots.take();
      stats.posts++;
      if (stats.firstPostAt === 0) stats.firstPostAt = Date.now();
      try {
        const res = await httpRequest(url, { method: 'POST', headers, body: raw, dispatcher: webhookAgent });
        await res.body.dump().catch(() => {});
        stats.lastAnsweredAt = Date.now();
        if (res.statusCode === 200) return 200;
      } catch {
        /* retried below */
      } finally {
        slots.release(held);
      }
      await sleep(100 * 2 ** attempt);
    }
    stats.failures++;
    return null;
  }

  return { target, post, queue: slots.queue };
}

/** A messages-field webhook (or another field's) for one number, in the provider's envelope. */
export function envelope(
  state: EmulatorState,
  phoneNumberId: string,
  value: Record<string, unknown>,
  field = 'messages',
) {
  const n = state.numbers.get(phoneNumberId);
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: n?.wabaId ?? 'emulator-waba',
        changes: [
          {
            field,
            value: {
              messaging_product: 'whatsapp',
              metadata: {
                display_phone_number: n?.displayPhoneNumber ?? '15550000000',
                phone_number_id: phoneNumberId,
              },
              ...value,
            },
          },
        ],
      },
    ],
  };
}
