// The status receipts (sent, delivered, read … or failed) the emulated provider posts for an
// accepted send, shaped by the receipt settings: delay, order, duplicates, batching.
import { sleep } from './emulator-common.js';
import type { EmulatorState, FailureRule, ReceiptSettings } from './emulator-state.js';
import { envelope, type WebhookSender } from './emulator-webhook-sender.js';

/** One accepted send, as its receipts name it. */
export type AcceptedSend = { phoneNumberId: string; to: string; wamid: string; messageId: string | null };

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
  const statusItem = (status: string, i: number) => ({
    id: wamid,
    status,
    timestamp: String(base + i),
    recipient_id: to,
    ...(messageId ? { biz_opaque_callback_data: messageId } : {}),
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
