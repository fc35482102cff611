// POST /messages/broadcast: the request schema and the rules JSON Schema cannot say on its own.
// The content is POST /messages' content, with its schema and cross-field rules reused as they are.
import { type Static, Type } from '@sinclair/typebox';

import { templateComponentProblems } from '../messages/content-rules.js';
import { crossFieldProblems, IntakeFields, isObject, TemplateComponents } from '../messages/send-request.js';
import type { Problem } from '../shared/errors.js';
import { E164 } from '../shared/schemas.js';

export const MAX_BROADCAST_RECIPIENTS = 5000;
/** Metadata is copied to every message of the broadcast, so it is kept smaller than a send's. */
export const MAX_BROADCAST_METADATA_BYTES = 2048;
/**
 * A recipient without its own externalId gets `<broadcast externalId>:<index>`; the broadcast's
 * externalId is kept short enough for that to fit the 200 characters of a message externalId.
 */
export const MAX_BROADCAST_EXTERNAL_ID = 190;
export const MAX_BROADCAST_NAME = 200;

export const BroadcastRecipient = Type.Object(
  {
    phoneE164: E164(),
    externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    /** This recipient's template values; replace content.template.components for them. */
    components: Type.Optional(TemplateComponents),
  },
  { additionalProperties: false },
);

export const BroadcastRequestSchema = Type.Object(
  {
    externalId: Type.String({ minLength: 1, maxLength: MAX_BROADCAST_EXTERNAL_ID }),
    /** A label for people (the broadcast's lists and record); not an identifier. */
    name: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_BROADCAST_NAME })),
    channel: IntakeFields.channel,
    content: IntakeFields.content,
    recipients: Type.Array(BroadcastRecipient, { minItems: 1, maxItems: MAX_BROADCAST_RECIPIENTS }),
    chatAccountId: IntakeFields.chatAccountId,
    metadata: IntakeFields.metadata,
    ttlSeconds: IntakeFields.ttlSeconds,
    sendAt: IntakeFields.sendAt,
  },
  { additionalProperties: false, 'x-cross-field': true },
);

export type BroadcastRequest = Static<typeof BroadcastRequestSchema>;

/** The externalId of recipient `index`'s message. */
export const messageExternalId = (broadcastExternalId: string, index: number, own: string | undefined) =>
  own ?? `${broadcastExternalId}:${index}`;

/**
 * POST /messages' cross-field rules on the content and metadata, plus the broadcast's own: no
 * recipient twice, no message externalId twice, per-recipient components only for templates,
 * smaller metadata. Tolerates any shape, like crossFieldProblems.
 */
/** Bytes of message content a broadcast may create in all (content JSON summed over recipients). */
export const MAX_BROADCAST_CONTENT_BYTES = 16 * 1024 * 1024;

export function broadcastProblems(body: unknown, opts: { allowPrivateUrls: boolean }): Problem[] {
  const problems = crossFieldProblems(body, opts);
  if (!isObject(body)) return problems;
  // A reaction is to one earlier message of one conversation: never the same for many recipients.
  if (isObject(body.content) && body.content.type === 'reaction')
    problems.push({
      path: 'content.type',
      message: 'reaction is not allowed in a broadcast (send it with POST /messages)',
    });
  if (
    isObject(body.metadata) &&
    !problems.some((p) => p.path === 'metadata') &&
    Buffer.byteLength(JSON.stringify(body.metadata)) > MAX_BROADCAST_METADATA_BYTES
  ) {
    problems.push({
      path: 'metadata',
      message: `must be at most ${MAX_BROADCAST_METADATA_BYTES} bytes as JSON in a broadcast`,
    });
  }
  if (!Array.isArray(body.recipients) || body.recipients.length > MAX_BROADCAST_RECIPIENTS) return problems;
  // Each message row carries its content: the total is bounded, not only each part.
  const shared = isObject(body.content) ? Buffer.byteLength(JSON.stringify(body.content)) : 0;
  const total = body.recipients.reduce<number>(
    (sum, r: unknown) =>
      sum +
      (isObject(r) && r.components !== undefined ? shared + Buffer.byteLength(JSON.stringify(r.components)) : shared),
    0,
  );
  if (total > MAX_BROADCAST_CONTENT_BYTES) {
    problems.push({
      path: 'recipients',
      message: `content × recipients must be at most ${MAX_BROADCAST_CONTENT_BYTES} bytes as JSON (this one is ${total}): send fewer recipients per broadcast`,
    });
  }
  const isTemplate = isObject(body.content) && body.content.type === 'template';
  const prefix = typeof body.externalId === 'string' ? body.externalId : null;
  const phones = new Map<string, number>();
  const externalIds = new Map<string, number>();
  body.recipients.forEach((r: unknown, i) => {
    if (!isObject(r)) return;
    if (typeof r.phoneE164 === 'string') {
      const first = phones.get(r.phoneE164);
      if (first === undefined) phones.set(r.phoneE164, i);
      else problems.push({ path: `recipients.${i}.phoneE164`, message: `duplicates recipients.${first}.phoneE164` });
    }
    const own = typeof r.externalId === 'string' ? r.externalId : undefined;
    if (prefix !== null || own !== undefined) {
      const id = messageExternalId(prefix ?? '', i, own);
      const first = externalIds.get(id);
      if (first === undefined) externalIds.set(id, i);
      else
        problems.push({
          path: `recipients.${i}.externalId`,
          message: `gives the message externalId ${JSON.stringify(id)} of recipients.${first} too`,
        });
    }
    if (r.components !== undefined && !isTemplate) {
      problems.push({ path: `recipients.${i}.components`, message: 'is allowed only when content.type is template' });
    }
    if (isTemplate && isObject(r.components)) {
      const path = `recipients.${i}.components`;
      problems.push(...templateComponentProblems(r.components, path, opts));
      // One upload serves the whole broadcast: a recipient's own file goes by url.
      if (isObject(r.components.headerMedia) && r.components.headerMedia.mediaId !== undefined)
        problems.push({
          path: `${path}.headerMedia.mediaId`,
          message: "is not allowed in a recipient's components: give url",
        });
    }
  });
  return problems;
}
