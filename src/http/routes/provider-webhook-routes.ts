// The provider's webhook (each account's webhook.callbackUrl): the GET verification handshake and
// signed POSTs of receipts. Bodies are kept raw: the signature covers the exact bytes, checked
// before the body is parsed.
import { Type } from '@sinclair/typebox';

import type { ReceiptService, WebhookChannel } from '../../receipts/receipt-service.js';
import { safeEqual } from '../../shared/crypto.js';
import { dropUnstorableItems } from '../input-guard.js';
import type { Server } from '../server.js';

/**
 * A provider webhook is read whole before its signature can be checked, from anyone: 1 MiB bounds
 * that (receipts and inbound messages are a few KB; media come by id). A declared length over it
 * is refused at once, a longer chunked body as soon as it passes the limit: 413 payload_too_large.
 */
export const MAX_PROVIDER_WEBHOOK_BYTES = 1024 * 1024;

const Handshake = Type.Object({
  'hub.mode': Type.Optional(Type.String({ maxLength: 100 })),
  'hub.verify_token': Type.Optional(Type.String({ maxLength: 1000 })),
  'hub.challenge': Type.Optional(Type.String({ maxLength: 1000 })),
});

export function registerProviderWebhookRoutes(
  app: Server,
  deps: { receipts: ReceiptService; verifyToken: string | null },
) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_PROVIDER_WEBHOOK_BYTES }, (_req, body, done) =>
    done(null, body),
  );

  const routes: { path: string; channel: (params: Record<string, string>) => WebhookChannel }[] = [
    { path: '/provider/webhooks/app', channel: () => ({ kind: 'app' }) },
    {
      path: '/provider/webhooks/integrations/:integrationId',
      channel: (p) => ({ kind: 'integration', integrationId: p.integrationId! }),
    },
  ];
  const hide = { hide: true };

  for (const route of routes) {
    app.get(route.path, { schema: { ...hide, querystring: Handshake } }, async (request, reply) => {
      const q = request.query;
      const token = q['hub.verify_token'] ?? '';
      if (q['hub.mode'] !== 'subscribe' || deps.verifyToken === null || !safeEqual(token, deps.verifyToken)) {
        return reply.code(403).type('text/plain').send('Forbidden');
      }
      return reply.type('text/plain').send(q['hub.challenge'] ?? '');
    });

    app.post(route.path, { schema: hide, bodyLimit: MAX_PROVIDER_WEBHOOK_BYTES }, async (request, reply) => {
      const channel = route.channel(request.params as Record<string, string>);
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = request.headers['x-hub-signature-256'];
      if (!(await deps.receipts.authenticate(channel, raw, typeof signature === 'string' ? signature : undefined))) {
        return reply.code(401).send({ error: 'invalid_signature' });
      }
      let payload: unknown;
      try {
        payload = JSON.parse(raw.toString('utf8'));
      } catch {
        return reply
          .code(400)
          .send({ error: 'validation_error', details: [{ path: '', message: 'body must be a valid JSON document' }] });
      }
      // Text the database can never store (NUL, unpaired surrogates) would fail its items on every
      // delivery, and the provider retries any answer but 200 for days: those items are ignored,
      // the rest applied, and the webhook answered 200 (decision 0062).
      const { kept, dropped } = dropUnstorableItems(payload);
      if (dropped.length > 0)
        request.log.warn(
          {
            dropped: dropped.slice(0, 20).map((p) => p.slice(0, 200)),
            droppedCount: dropped.length,
            whole: kept === null,
          },
          'provider webhook items holding text the database cannot store (NUL, unpaired surrogates) ignored',
        );
      if (kept === null) return reply.code(200).send({ received: true });
      const counts = await deps.receipts.ingest(channel, kept);
      // A failure of ours (not of the payload) asks the provider to deliver again.
      return reply.code(counts.failed > 0 ? 500 : 200).send({ received: true });
    });
  }
}
