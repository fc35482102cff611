// Sending: POST /{version}/{phone-number-id}/messages as the provider answers it, with the token
// check, failure rules (errors, hangs, asynchronous failures), throughput and pair rate limits, and
// the receipts posted for each accepted send. POST /{version}/{phone-number-id}/marketing_messages
// (the Marketing Messages API) takes the same payload, only templates, and only for a number marked
// onboarded (`marketingMessagesOnboarded`); otherwise 131055, as the provider answers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { bearerToken, injectedBody, newWamid, refuseToken, sleep, tokenRefused } from './emulator-common.js';
import { answerReadMark } from './emulator-inbound-media.js';
import { createWindows } from './emulator-limits.js';
import { payloadProblem } from './emulator-payloads.js';
import { messagingLimitFailure } from './emulator-portfolios.js';
import { defaultPricing, sendReceipts } from './emulator-receipts.js';
import { type EmulatorState, inMaintenance } from './emulator-state.js';
import { templateSendRefusal } from './emulator-template-sends.js';
import type { WebhookSender } from './emulator-webhook-sender.js';
import { graphError } from './graph-error.js';

/** A business-scoped user id as the provider writes it: country code, dot, letters and digits. */
const USER_ID = /^[A-Z]{2}\.[A-Za-z0-9.]{1,150}$/;

type SendRequest = FastifyRequest<{
  Params: { version: string; phoneNumberId: string };
  Body: Record<string, unknown>;
}>;

export function registerMessageRoute(app: FastifyInstance, state: EmulatorState, sender: WebhookSender): void {
  const windows = createWindows();
  const handle = async (request: SendRequest, reply: FastifyReply, route: 'messages' | 'marketing_messages') => {
    const { phoneNumberId } = request.params;
    const number = state.numbers.get(phoneNumberId);
    const token = bearerToken(request);
    if (state.latencyMs > 0) await sleep(state.latencyMs);
    if (tokenRefused(token, number)) return refuseToken(reply);
    const body = request.body ?? {};
    if (route === 'messages' && body.status === 'read') return answerReadMark(state, phoneNumberId, body, reply);
    if (route === 'marketing_messages') {
      if (!number?.marketingMessagesOnboarded)
        return reply
          .code(400)
          .send(graphError(131055, 'You must accept the Marketing Messages API terms to use the API.'));
      if (body.type !== 'template')
        return reply.code(400).send(graphError(100, 'Invalid parameter. Message must be a template message.'));
    }
    // A number in `to`, or (2026) a business-scoped user id in `recipient`; `to` wins when both.
    const userId = body.to === undefined && typeof body.recipient === 'string' ? body.recipient : null;
    const to = userId ?? String(body.to ?? '').replace(/^\+/, '');
    if (body.messaging_product !== 'whatsapp' || !(userId ? USER_ID.test(userId) : /^\d{6,15}$/.test(to)))
      return reply.code(400).send(graphError(100, 'Invalid parameter'));
    const media = (body.image ?? body.document) as { id?: string } | undefined;
    if (media?.id !== undefined && !state.media.has(media.id))
      return reply.code(400).send(graphError(131053, 'Media upload error: unknown media id'));
    const problem = payloadProblem(body, {
      mediaType: (id) => state.media.get(id)?.mimeType,
      knowsMessage: (wamid) => state.inboundIds.has(wamid) || state.sent.some((s) => s.wamid === wamid),
    });
    if (problem !== null) {
      state.refused.push({ phoneNumberId, to, problem, payload: body });
      return reply.code(400).send(graphError(131009, `Parameter value is not valid: ${problem}`));
    }
    const templateRefusal = body.type === 'template' ? refuseTemplate(state, { phoneNumberId, to }, body) : null;
    if (templateRefusal) return reply.code(400).send(templateRefusal);
    const messageId = typeof body.biz_opaque_callback_data === 'string' ? body.biz_opaque_callback_data : null;
    const rule = state.takeRule(phoneNumberId, to);
    if (rule?.hang) {
      state.held.push({ phoneNumberId, to, messageId, at: Date.now() });
      await sleep(120_000);
      return reply.code(504).send();
    }
    if (rule?.httpStatus !== undefined || (rule?.error && !rule.asyncFailure))
      return reply.code(rule.httpStatus ?? 400).send(injectedBody(rule));
    if (inMaintenance(number)) return maintenance(state, reply, { phoneNumberId, to, messageId, at: Date.now() });
    if (!windows.take(`mps:${phoneNumberId}`, number?.throughputMps ?? state.defaultThroughputMps, 1000)) {
      state.throttled.push({ phoneNumberId, to, messageId, at: Date.now() });
      return reply.code(400).send(graphError(130429, 'Rate limit hit', 2494055));
    }
    if (state.pairRateLimit && !windows.take(`pair:${phoneNumberId}:${to}`, 1, state.pairRateWindowMs)) {
      state.pairLimited.push({ phoneNumberId, to, messageId, at: Date.now() });
      return reply.code(400).send(graphError(131056, '(Business Account, Consumer Account) pair rate limit hit'));
    }
    // Over the portfolio's messaging limit: accepted, then not delivered (a failed receipt).
    const asyncFailure = messagingLimitFailure(state, { phoneNumberId, to, messageId, at: Date.now() }, body.type);
    const wamid = newWamid();
    state.sent.push({
      phoneNumberId,
      to,
      type: String(body.type),
      messageId,
      wamid,
      at: Date.now(),
      payload: body,
      route,
    });
    const accepted = { phoneNumberId, to: userId ? '' : to, userId, wamid, messageId };
    await postReceipts(state, sender, request, { accepted, body, failure: asyncFailure ?? rule?.asyncFailure });
    if (rule?.answerAfterMs !== undefined) await sleep(rule.answerAfterMs);
    return {
      messaging_product: 'whatsapp',
      contacts: [userId ? { input: userId, user_id: userId } : { input: String(body.to), wa_id: to }],
      messages: [{ id: wamid, ...(body.type === 'template' ? { message_status: 'accepted' } : {}) }],
    };
  };
  app.post('/:version/:phoneNumberId/messages', (request: SendRequest, reply) => handle(request, reply, 'messages'));
  app.post('/:version/:phoneNumberId/marketing_messages', (request: SendRequest, reply) =>
    handle(request, reply, 'marketing_messages'),
  );
}

/** A template send checked against the catalog of the number's WABA (emulator-template-sends.ts). */
function refuseTemplate(
  state: EmulatorState,
  send: { phoneNumberId: string; to: string },
  body: Record<string, unknown>,
) {
  const t = (body.template ?? {}) as { name?: unknown; language?: { code?: unknown } };
  const wabaId = state.numbers.get(send.phoneNumberId)?.wabaId;
  const catalog = wabaId ? (state.templates.get(wabaId) ?? []) : [];
  const template = catalog.find((x) => x.name === t.name && x.language === t.language?.code);
  const refusal = template ? templateSendRefusal(template, body) : null;
  if (refusal) state.refused.push({ ...send, problem: refusal.error.error_data.details, payload: body });
  return refusal;
}

/** The receipts of an accepted send: posted (and awaited when they must beat the answer). */
async function postReceipts(
  state: EmulatorState,
  sender: WebhookSender,
  request: SendRequest,
  send: {
    accepted: { phoneNumberId: string; to: string; userId: string | null; wamid: string; messageId: string | null };
    body: Record<string, unknown>;
    failure: Parameters<typeof sendReceipts>[3];
  },
) {
  const setting = state.receipts.pricing === undefined ? 'derived' : state.receipts.pricing;
  const pricing = setting === 'derived' ? defaultPricing(state, send.accepted.phoneNumberId, send.body) : setting;
  const receipts = sendReceipts(state, sender, { ...send.accepted, pricing }, send.failure, { ...state.receipts });
  if (state.receipts.beforeResponse) await receipts;
  else receipts.catch((err: unknown) => request.log.warn({ err }, 'posting receipts failed'));
}

/** A send to a number in its maintenance window (a throughput upgrade): refused with 131057. */
function maintenance(state: EmulatorState, reply: FastifyReply, refused: EmulatorState['maintenanceRefused'][number]) {
  state.maintenanceRefused.push(refused);
  return reply.code(400).send(graphError(131057, 'Account in maintenance mode'));
}
