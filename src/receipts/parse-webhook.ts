// The provider's webhook payload → the status receipts it carries (every entry, change and
// status; a malformed item is skipped, never the whole batch).

export type ReceiptStatus = 'sent' | 'delivered' | 'read' | 'failed';

export type StatusReceipt = {
  phoneNumberId: string;
  providerMessageId: string;
  status: ReceiptStatus;
  occurredAt: Date;
  /** Our messageId, echoed from biz_opaque_callback_data when it is one. */
  messageId: string | null;
  error: { code: number | null; title: string | null; details: string | null } | null;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUSES: Record<string, ReceiptStatus> = { sent: 'sent', delivered: 'delivered', read: 'read', played: 'read', failed: 'failed' };

const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

export function parseStatusReceipts(payload: unknown): { receipts: StatusReceipt[]; skipped: number } {
  const receipts: StatusReceipt[] = [];
  let skipped = 0;
  for (const entry of asArray(obj(payload).entry)) {
    for (const change of asArray(obj(entry).changes)) {
      const value = obj(obj(change).value);
      const phoneNumberId = str(obj(value.metadata).phone_number_id);
      for (const raw of asArray(value.statuses)) {
        const s = obj(raw);
        const status = STATUSES[String(s.status)];
        const id = str(s.id);
        const seconds = Number(s.timestamp);
        if (!phoneNumberId || !status || !id || !Number.isFinite(seconds) || seconds <= 0 || seconds > 1e11) {
          skipped++;
          continue;
        }
        const opaque = str(s.biz_opaque_callback_data);
        const e = obj(asArray(s.errors)[0]);
        receipts.push({
          phoneNumberId,
          providerMessageId: id.slice(0, 500),
          status,
          occurredAt: new Date(seconds * 1000),
          messageId: opaque && UUID.test(opaque) ? opaque.toLowerCase() : null,
          error: status === 'failed'
            ? { code: typeof e.code === 'number' ? e.code : Number.isFinite(Number(e.code)) ? Number(e.code) : null, title: str(e.title)?.slice(0, 500) ?? str(e.message)?.slice(0, 500) ?? null, details: str(obj(e.error_data).details)?.slice(0, 500) ?? null }
            : null,
        });
      }
    }
  }
  return { receipts, skipped };
}
