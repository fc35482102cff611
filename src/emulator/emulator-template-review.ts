// PATCH /__emulator/templates/{waba-id}/{template-id}: decides a template's review and posts the
// template webhooks the provider would (status, quality and category updates; docs/emulator.md).
import type { FastifyInstance } from 'fastify';

import type { EmulatedTemplate, EmulatorState } from './emulator-state.js';
import { unixSeconds } from './emulator-user-preferences.js';

export function registerTemplateReviewControl(
  app: FastifyInstance,
  state: EmulatorState,
  /** Posts a template webhook to the callback of the WABA's numbers (or the app's). */
  post: (wabaId: string, payload: unknown) => Promise<number | null>,
): void {
  /**
   * The review outcome: status (APPROVED, REJECTED, PAUSED, DISABLED …), rejectedReason,
   * qualityScore, category. Each given field posts its template webhook (status, quality or
   * category update) to the WABA's callback, with `timestamp` as the entry's time when given (a
   * late delivery); a field given with its current value is posted again, as a redelivery is.
   */
  app.patch<{
    Params: { wabaId: string; templateId: string };
    Body: ReviewBody;
  }>('/__emulator/templates/:wabaId/:templateId', async (request, reply) => {
    const { wabaId, templateId } = request.params;
    const t = (state.templates.get(wabaId) ?? []).find((x) => x.id === templateId);
    if (!t) return reply.code(404).send({ error: 'no such template' });
    const before = { status: t.status, quality: t.quality_score?.score ?? 'UNKNOWN', category: t.category };
    const { status, rejectedReason, qualityScore, category } = request.body ?? {};
    if (status !== undefined) t.status = status;
    if (rejectedReason !== undefined) t.rejected_reason = rejectedReason;
    else if (status !== undefined && status !== 'REJECTED') t.rejected_reason = 'NONE';
    if (qualityScore !== undefined) t.quality_score = { score: qualityScore, date: Math.floor(Date.now() / 1000) };
    if (category !== undefined) t.category = category;
    const changes = templateWebhookValues(t, before, request.body ?? {});
    let delivered = true;
    for (const [field, value] of changes) {
      const payload = {
        object: 'whatsapp_business_account',
        entry: [{ id: wabaId, time: Number(unixSeconds(request.body?.timestamp)), changes: [{ field, value }] }],
      };
      delivered = (await post(wabaId, payload)) === 200 && delivered;
    }
    return { ...t, webhooksDelivered: changes.length > 0 && delivered };
  });
}

type ReviewBody = {
  status?: string;
  rejectedReason?: string;
  qualityScore?: string;
  category?: string;
  timestamp?: number | string;
};

/** The template webhooks (field, value) a review change posts, in the order status, quality, category. */
function templateWebhookValues(
  t: EmulatedTemplate,
  before: { status: string; quality: string; category: string },
  body: ReviewBody,
): [string, Record<string, unknown>][] {
  const id = {
    // A number, as the provider writes it (a string when it would not survive as one).
    message_template_id: Number.isSafeInteger(Number(t.id)) ? Number(t.id) : t.id,
    message_template_name: t.name,
    message_template_language: t.language,
  };
  const out: [string, Record<string, unknown>][] = [];
  if (body.status !== undefined)
    out.push([
      'message_template_status_update',
      { event: t.status, ...id, reason: t.rejected_reason ?? 'NONE', message_template_category: t.category },
    ]);
  if (body.qualityScore !== undefined)
    out.push([
      'message_template_quality_update',
      { previous_quality_score: before.quality, new_quality_score: body.qualityScore, ...id },
    ]);
  if (body.category !== undefined)
    out.push(['template_category_update', { ...id, previous_category: before.category, new_category: t.category }]);
  return out;
}
