// `chatgate emulator`: a local stand-in for the provider's Cloud API, for development, demos,
// tests and benchmarks. It speaks the same protocol (paths, bearer tokens, Graph error envelope,
// wamid ids, signed webhooks) and adds a control API under /__emulator.
import crypto from 'node:crypto';

import Fastify, { type FastifyInstance } from 'fastify';
import { Agent, request as httpRequest } from 'undici';

import { registerStateControls } from './emulator-controls.js';
import { createWindows, MEDIA_LIMITS } from './emulator-limits.js';
import { createEmulatorState, type EmulatorState, type FailureRule, type ReceiptSettings } from './emulator-state.js';
import { registerTemplateControls, registerTemplateRoutes } from './emulator-templates.js';
import { registerUserPreferenceControl, unixSeconds } from './emulator-user-preferences.js';
import { registerVersionCheck } from './emulator-versions.js';
import { graphError } from './graph-error.js';

export type EmulatorOptions = {
  callbackUrl: string | null;
  appSecret: string | null;
  latencyMs?: number;
  logLevel?: string;
  /** The emulator's clock for Graph API version expiry (default: the real one). */
  now?: () => Date;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A provider-style numeric id (15 digits; randomInt's range stops at 2^48). */
const numericId = () => String(crypto.randomInt(1e14, 2 ** 48 - 1));
const newWamid = () => `wamid.${crypto.randomBytes(24).toString('base64url')}`;

export function createEmulator(opts: EmulatorOptions): { app: FastifyInstance; state: EmulatorState } {
  const state = createEmulatorState();
  state.latencyMs = opts.latencyMs ?? 0;
  const app = Fastify({
    logger: { level: opts.logLevel ?? 'warn' },
    bodyLimit: 110 * 1024 * 1024,
    forceCloseConnections: true,
  });
  const windows = createWindows();
  let callbackUrl = opts.callbackUrl;
  let appSecret = opts.appSecret;

  registerVersionCheck(app, opts.now ?? (() => new Date()));

  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Webhook POSTs go through one keep-alive pool (undici's request: the global fetch costs
  // several times the CPU per POST, which in a bench is taken from the service under test).
  const webhookAgent = new Agent({ connections: 256, headersTimeout: 10_000, bodyTimeout: 10_000 });
  let closed = false;
  app.addHook('onClose', async () => {
    closed = true; // webhooks still being retried give up instead of failing on the closed pool
    await webhookAgent.destroy();
  });

  // Webhook POSTs in flight, and those waiting for a slot when `receipts.maxInFlight` caps them.
  let posting = 0;
  const waiting: (() => void)[] = [];
  async function slot(): Promise<boolean> {
    const limit = state.receipts.maxInFlight;
    if (!(limit > 0)) return false;
    while (posting >= state.receipts.maxInFlight) await new Promise<void>((r) => waiting.push(r));
    posting++;
    return true;
  }
  function release(held: boolean) {
    if (!held) return;
    posting--;
    waiting.shift()?.();
  }

  async function postWebhook(payload: unknown, phoneNumberId?: string): Promise<number | null> {
    const url =
      (phoneNumberId !== undefined ? state.numbers.get(phoneNumberId)?.callbackUrl : undefined) ?? callbackUrl;
    if (!url) return null;
    const raw = JSON.stringify(payload);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (appSecret)
      headers['x-hub-signature-256'] = `sha256=${crypto.createHmac('sha256', appSecret).update(raw).digest('hex')}`;
    const stats = state.webhookStats;
    // The provider re-delivers on failure; a few quick tries are enough here.
    for (let attempt = 0; attempt < 5 && !closed; attempt++) {
      if (attempt > 0) stats.retries++;
      const held = await slot();
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
        release(held);
      }
      await sleep(100 * 2 ** attempt);
    }
    stats.failures++;
    return null;
  }

  const envelope = (phoneNumberId: string, value: Record<string, unknown>, field = 'messages') => {
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
  };

  /** Posts the receipts of one accepted send (after r.delayMs); resolves once they were posted. */
  async function sendReceipts(
    phoneNumberId: string,
    to: string,
    wamid: string,
    messageId: string | null,
    failure: FailureRule['asyncFailure'] | undefined,
    r: ReceiptSettings,
  ): Promise<void> {
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
    for (const statuses of posts) await postWebhook(envelope(phoneNumberId, { statuses }), phoneNumberId);
  }

  // ---- the Cloud API ----
  app.post<{ Params: { version: string; phoneNumberId: string }; Body: Record<string, unknown> }>(
    '/:version/:phoneNumberId/messages',
    async (request, reply) => {
      const { phoneNumberId } = request.params;
      const number = state.numbers.get(phoneNumberId);
      const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      if (state.latencyMs > 0) await sleep(state.latencyMs);
      if (!token || (number?.accessToken !== undefined && token !== number.accessToken)) {
        return reply
          .code(401)
          .send(graphError(190, 'Error validating access token: Session has expired or the token is invalid.'));
      }
      const body = request.body ?? {};
      const to = String(body.to ?? '').replace(/^\+/, '');
      if (body.messaging_product !== 'whatsapp' || !/^\d{6,15}$/.test(to))
        return reply.code(400).send(graphError(100, 'Invalid parameter'));
      const media = (body.image ?? body.document) as { id?: string } | undefined;
      if (media?.id !== undefined && !state.media.has(media.id))
        return reply.code(400).send(graphError(131053, 'Media upload error: unknown media id'));
      const rule = state.takeRule(phoneNumberId, to);
      if (rule?.hang) {
        const messageId = typeof body.biz_opaque_callback_data === 'string' ? body.biz_opaque_callback_data : null;
        state.held.push({ phoneNumberId, to, messageId, at: Date.now() });
        await sleep(120_000);
        return reply.code(504).send();
      }
      if (rule?.httpStatus !== undefined || (rule?.error && !rule.asyncFailure)) {
        const status = rule.httpStatus ?? 400;
        return reply
          .code(status)
          .send(
            rule.error
              ? graphError(rule.error.code, rule.error.message ?? 'Injected failure', rule.error.subcode)
              : { error: 'injected' },
          );
      }
      if (!windows.take(`mps:${phoneNumberId}`, number?.throughputMps ?? state.defaultThroughputMps, 1000)) {
        const messageId = typeof body.biz_opaque_callback_data === 'string' ? body.biz_opaque_callback_data : null;
        state.throttled.push({ phoneNumberId, to, messageId, at: Date.now() });
        return reply.code(400).send(graphError(130429, 'Rate limit hit', 2494055));
      }
      if (state.pairRateLimit && !windows.take(`pair:${phoneNumberId}:${to}`, 1, 6000)) {
        return reply.code(400).send(graphError(131056, '(Business Account, Consumer Account) pair rate limit hit'));
      }
      const wamid = newWamid();
      const messageId = typeof body.biz_opaque_callback_data === 'string' ? body.biz_opaque_callback_data : null;
      state.sent.push({ phoneNumberId, to, type: String(body.type), messageId, wamid, at: Date.now(), payload: body });
      const receipts = sendReceipts(phoneNumberId, to, wamid, messageId, rule?.asyncFailure, { ...state.receipts });
      if (state.receipts.beforeResponse) await receipts;
      else receipts.catch((err: unknown) => request.log.warn({ err }, 'posting receipts failed'));
      return {
        messaging_product: 'whatsapp',
        contacts: [{ input: String(body.to), wa_id: to }],
        messages: [{ id: wamid, ...(body.type === 'template' ? { message_status: 'accepted' } : {}) }],
      };
    },
  );

  // Media upload: multipart with messaging_product, file (and type); the provider's type and size
  // limits answered with 131053.
  app.post<{ Params: { version: string; phoneNumberId: string } }>(
    '/:version/:phoneNumberId/media',
    async (request, reply) => {
      const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      const number = state.numbers.get(request.params.phoneNumberId);
      if (!token || (number?.accessToken !== undefined && token !== number.accessToken)) {
        return reply
          .code(401)
          .send(graphError(190, 'Error validating access token: Session has expired or the token is invalid.'));
      }
      const rule = state.takeRule(request.params.phoneNumberId, 'media');
      if (rule?.httpStatus !== undefined || rule?.error) {
        return reply
          .code(rule.httpStatus ?? 400)
          .send(
            rule.error
              ? graphError(rule.error.code, rule.error.message ?? 'Injected failure', rule.error.subcode)
              : { error: 'injected' },
          );
      }
      let form: FormData;
      try {
        form = await new Response(new Uint8Array(request.body as Buffer), {
          headers: { 'content-type': String(request.headers['content-type'] ?? '') },
        }).formData();
      } catch {
        return reply.code(400).send(graphError(100, 'Invalid parameter'));
      }
      const file = form.get('file');
      if (form.get('messaging_product') !== 'whatsapp' || !(file instanceof Blob))
        return reply.code(400).send(graphError(100, 'Invalid parameter'));
      const mimeType = String(form.get('type') ?? file.type);
      const limit = MEDIA_LIMITS[mimeType];
      if (limit === undefined || file.size > limit)
        return reply.code(400).send(graphError(131053, 'Media upload error', undefined));
      const data = Buffer.from(await file.arrayBuffer());
      const id = numericId();
      state.media.set(id, {
        mimeType,
        size: file.size,
        filename: (file as File).name ?? null,
        sha256: crypto.createHash('sha256').update(data).digest('hex'),
        phoneNumberId: request.params.phoneNumberId,
      });
      return { id };
    },
  );

  // Phone-number read: the bearer token is checked as for sends (a registered number's own token
  // only), and `lookup` failure rules apply, so a test can make a token check fail, then pass.
  app.get<{ Params: { version: string; id: string } }>('/:version/:id', async (request, reply) => {
    const n = state.numbers.get(request.params.id);
    const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    state.lookups.push({ phoneNumberId: request.params.id, at: Date.now() });
    if (state.latencyMs > 0) await sleep(state.latencyMs);
    if (!token || (n?.accessToken !== undefined && token !== n.accessToken)) {
      return reply
        .code(401)
        .send(graphError(190, 'Error validating access token: Session has expired or the token is invalid.'));
    }
    const rule = state.takeRule(request.params.id, 'lookup');
    if (rule?.hang) {
      await sleep(120_000);
      return reply.code(504).send();
    }
    if (rule?.httpStatus !== undefined || rule?.error) {
      return reply
        .code(rule.httpStatus ?? 400)
        .send(
          rule.error
            ? graphError(rule.error.code, rule.error.message ?? 'Injected failure', rule.error.subcode)
            : { error: 'injected' },
        );
    }
    if (!n) return reply.code(400).send(graphError(100, 'Unsupported get request. Object does not exist'));
    return {
      id: request.params.id,
      display_phone_number: n.displayPhoneNumber ?? '+1 555-000-0000',
      verified_name: n.verifiedName ?? 'Emulated Business',
      quality_rating: 'GREEN',
      platform_type: 'CLOUD_API',
      throughput: { level: (n.throughputMps ?? 80) > 80 ? 'HIGH' : 'STANDARD' },
      status: 'CONNECTED',
    };
  });

  registerTemplateRoutes(app, state);

  // ---- control API ----
  registerStateControls(app, state, () => ({ inFlight: posting, waiting: waiting.length }));
  app.put<{
    Body: Partial<ReceiptSettings> & {
      latencyMs?: number;
      defaultThroughputMps?: number;
      pairRateLimit?: boolean;
      callbackUrl?: string;
      appSecret?: string;
    };
  }>('/__emulator/settings', async (request) => {
    const {
      latencyMs,
      defaultThroughputMps,
      pairRateLimit,
      callbackUrl: cb,
      appSecret: secret,
      ...receipts
    } = request.body ?? {};
    Object.assign(state.receipts, receipts);
    if (latencyMs !== undefined) state.latencyMs = latencyMs;
    if (defaultThroughputMps !== undefined) state.defaultThroughputMps = defaultThroughputMps;
    if (pairRateLimit !== undefined) state.pairRateLimit = pairRateLimit;
    if (cb !== undefined) callbackUrl = cb;
    if (secret !== undefined) appSecret = secret;
    return {
      receipts: state.receipts,
      latencyMs: state.latencyMs,
      defaultThroughputMps: state.defaultThroughputMps,
      pairRateLimit: state.pairRateLimit,
      callbackUrl,
    };
  });
  registerTemplateControls(app, state, (wabaId, payload) =>
    postWebhook(payload, [...state.numbers].find(([, n]) => n.wabaId === wabaId && n.callbackUrl)?.[0]),
  );
  registerUserPreferenceControl(app, (pn, value) => postWebhook(envelope(pn, value, 'user_preferences'), pn));
  /** Posts an inbound message webhook, as if a user had written to the number (docs/emulator.md). */
  app.post<{
    Body: { phoneNumberId: string; from?: string; text?: string; name?: string; type?: string; contextId?: string } & {
      timestamp?: number | string;
      fromUserId?: string;
      previousUserId?: string;
    };
  }>('/__emulator/inbound', async (request) => {
    const b = request.body;
    const id = newWamid();
    const from = b.from?.replace(/^\+/, '');
    const message: Record<string, unknown> = { ...(from ? { from } : {}), id, timestamp: unixSeconds(b.timestamp) };
    message.type = b.previousUserId ? 'system' : (b.type ?? 'text');
    if (b.fromUserId) message.from_user_id = b.fromUserId;
    if (message.type === 'text') message.text = { body: b.text ?? '' };
    if (b.previousUserId)
      message.system = { body: 'User changed', type: 'user_changed_user_id', previous_user_id: b.previousUserId };
    if (b.contextId) message.context = { from: '15550000000', id: b.contextId };
    const contact = { profile: { name: b.name ?? 'Emulated User' }, ...(from ? { wa_id: from } : {}) };
    const status = await postWebhook(
      envelope(b.phoneNumberId, {
        contacts: [{ ...contact, ...(b.fromUserId ? { user_id: b.fromUserId } : {}) }],
        messages: [message],
      }),
      b.phoneNumberId,
    );
    return { id, delivered: status === 200 };
  });

  return { app, state };
}
