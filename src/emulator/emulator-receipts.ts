// The status receipts (sent, delivered, read … or failed) the emulated provider posts for an
// accepted send, shaped by the receipt settings: delay, order, duplicates, batching.
import { sleep } from './emulator-common.js';
import type { EmulatorState, FailureRule, ReceiptSettings } from './emulator-state.js';
import { envelope, type WebhookSender } from './emulator-webhook-sender.js';

/** One accepted send, as its receipts name it. */
export type AcceptedSend = {
  phoneNumberId: string;
  to: string;
  wamid: string;
  messageId: string | null;
  /** The send's price (its receipts' `pricing`), or null for none. */
  pricing: Record<string, unknown> | null;
  /** The business-scoped user id a send addressed by `recipient` (the receipts' `recipient_user_id`). */
  userId?: string | null;
};

/** The provider's `pricing` of a send under per-message pricing: what the emulator derives by default. */
export function defaultPricing(state: EmulatorState, phoneNumberId: string, body: Record<string, unknown>) {
  if (body.type !== 'template')
    return { billable: false, pricing_model: 'PMP', type: 'free_customer_service', category: 'service' };
  const name = (body.template as { name?: unknown } | undefined)?.name;
  const wabaId = state.numbers.get(phoneNumberId)?.wabaId;
  const known = (wabaId ? state.templates.get(wabaId) : undefined)?.find((t) => t.name === name);
  return {
    billable: true,
    pricing_model: 'PMP',
    type: 'regular',
    category: (known?.category ?? 'utility').toLowerCase(),
  };
}

/** Posts the receipts of one accepted send (after r.delayMs); resolves once they were posted. */
export async function sendReceipts(
  state: EmulatorState,
  sender: WebhookSender,
  send: AcceptedSend,
  failure: FailureRule['asyncFailure'] | undefined,
  r: ReceiptSettings,
): Promise<void> {
  const { phoneNumberId, to, wamid } = send;
  let { messageId } = send;
  if (!r.enabled) return;
  if (r.omitCallbackData) messageId = null;
  const base = Math.floor(Date.now() / 1000);
  // The price rides on `sent` and on the first of delivered / read (the provider's documented places).
  const priced = new Set(['sent', r.statuses.find((s) => s !== 'sent')]);
  const statusItem = (status: string, i: number) => ({
    id: wamid,
    status,
    timestamp: String(base + i),
    ...(to ? { recipient_id: to } : {}),
    ...(send.userId ? { recipient_user_id: send.userId } : {}),
    ...(messageId ? { biz_opaque_callback_data: messageId } : {}),
    ...(send.pricing && priced.has(status) ? { pricing: send.pricing } : {}),
  });
  let items: Record<string, unknown>[] = failure
    ? [
        {
          ...statusItem('failed', 0),
          errors: [
            {
              code: failure.code,
              title: failure.title ?? 'Message failed',
              message: failure.title ?? 'Message failed',
              error_data: { details: failure.title ?? 'Message failed' },
            },
          ],
        },
      ]
    : r.statuses.map(statusItem);
  if (r.order === 'reverse') items = items.reverse();
  if (r.order === 'shuffle')
    items = items
      .map((v) => ({ v, k: Math.random() }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.v);
  items = items.flatMap((item) => Array.from({ length: 1 + r.duplicates }, () => item));
  if (r.delayMs > 0) await sleep(r.delayMs);
  const posts = r.batch ? [items] : items.map((i) => [i]);
  for (const statuses of posts) await sender.post(envelope(state, phoneNumberId, { statuses }), phoneNumberId);
}
