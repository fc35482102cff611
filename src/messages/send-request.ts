// POST /messages: the request schema and the rules JSON Schema cannot say on its own
// (which content field goes with which content.type, url xor mediaId, URL safety, metadata size).
import { type Static, Type } from '@sinclair/typebox';

import { MAX_TTL_SECONDS } from '../plans/plans.js';
import type { Problem } from '../shared/errors.js';
import {
  E164,
  LANGUAGE_PATTERN,
  TEMPLATE_NAME_PATTERN,
  USER_ID_PATTERN,
  UTC_TIMESTAMP_PATTERN,
  Uuid,
} from '../shared/schemas.js';
import { TemplateComponentsSchema } from '../shared/template-parameters.js';
import { CHANNEL_OFFICIAL, CONTENT_TYPES } from '../shared/vocab.js';
import {
  ContactsContent,
  InteractiveContent,
  LocationContent,
  MediaRef,
  ReactionContent,
  ReplyTo,
} from './content-kinds.js';
import { contentKindProblems, messageRefProblems } from './content-rules.js';

export const MAX_METADATA_BYTES = 16 * 1024;

/**
 * The fields a send and a broadcast share (POST /messages, POST /messages/broadcast), with the
 * same bounds and the same cross-field rules. Each request schema places them among its own
 * fields: the order of a schema's properties is the order in which an answer lists problems.
 */
export const IntakeFields = {
  channel: Type.Optional(Type.Literal(CHANNEL_OFFICIAL)),
  content: Type.Object(
    {
      type: Type.Union(CONTENT_TYPES.map((t) => Type.Literal(t))),
      text: Type.Optional(Type.String({ minLength: 1, maxLength: 10000 })),
      template: Type.Optional(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 512, pattern: TEMPLATE_NAME_PATTERN }),
            language: Type.String({ minLength: 2, maxLength: 20, pattern: LANGUAGE_PATTERN }),
            components: Type.Optional(TemplateComponentsSchema),
          },
          { additionalProperties: false },
        ),
      ),
      image: Type.Optional(MediaRef(false)),
      document: Type.Optional(MediaRef(true)),
      audio: Type.Optional(MediaRef(false)),
      video: Type.Optional(MediaRef(false)),
      sticker: Type.Optional(MediaRef(false)),
      location: Type.Optional(LocationContent),
      contacts: Type.Optional(ContactsContent),
      interactive: Type.Optional(InteractiveContent),
      reaction: Type.Optional(ReactionContent),
      caption: Type.Optional(Type.String({ maxLength: 1024 })),
    },
    { additionalProperties: false },
  ),
  chatAccountId: Type.Optional(Uuid()),
  metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
  // The spec's maximum (30 days) is refused above, not clipped; the plan's retention clips.
  ttlSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TTL_SECONDS })),
  /** A scheduled send: when it leaves (its bounds, which depend on now: schedule.ts). */
  sendAt: Type.Optional(
    Type.String({
      maxLength: 40,
      pattern: UTC_TIMESTAMP_PATTERN,
      description:
        "Schedules the send: ISO 8601 UTC (`Z`), at least 60 s and at most 35 days ahead, and before the message expires (ttlSeconds from now, clipped to the plan's retention). Accepted and counted now; sent at this time.",
    }),
  ),
};

export const SendRequestSchema = Type.Object(
  {
    externalId: Type.String({ minLength: 1, maxLength: 200 }),
    channel: IntakeFields.channel,
    // The spec's `{type: "phone", phoneE164}`, or (an addition, issue #25.2) `{type: "userId",
    // userId}`: which field goes with which type is a cross-field rule (toProblems), so that a
    // problem names its path.
    to: Type.Object(
      {
        type: Type.Union([Type.Literal('phone'), Type.Literal('userId')]),
        phoneE164: Type.Optional(E164()),
        userId: Type.Optional(
          Type.String({
            maxLength: 160,
            pattern: USER_ID_PATTERN,
            description:
              'With `type: "userId"`: the recipient\'s business-scoped user id, as the provider names it (`fromUserId` of an inbound message). Addition (issue #25).',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    content: IntakeFields.content,
    chatAccountId: IntakeFields.chatAccountId,
    metadata: IntakeFields.metadata,
    ttlSeconds: IntakeFields.ttlSeconds,
    sendAt: IntakeFields.sendAt,
    // Text, image, document: fail at once (REENGAGEMENT_REQUIRED, no provider call) when the
    // recipient's reply window is closed; ignored for templates (decision 0014).
    requireReplyWindow: Type.Optional(Type.Boolean()),
    /** Sends it as a reply to an earlier message of the same conversation (decision 0032). */
    replyTo: Type.Optional(ReplyTo),
  },
  { additionalProperties: false, 'x-cross-field': true },
);

export type SendRequest = Static<typeof SendRequestSchema>;

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const CONTENT_FIELDS = CONTENT_TYPES;

/**
 * Cross-field rules, run on the raw body next to schema validation so that one answer lists
 * every problem. Tolerates any shape: the schema reports type errors, this adds the rest.
 */
/**
 * `to`: phoneE164 with type phone, userId with type userId, never both. With a missing or unknown
 * type (the schema names it) and no userId, the spec's form is meant: its phoneE164 is required.
 */
function toProblems(to: unknown): Problem[] {
  if (!isObject(to)) return [];
  if (to.type !== 'phone' && to.type !== 'userId')
    return to.userId === undefined && to.phoneE164 === undefined
      ? [{ path: 'to.phoneE164', message: 'is required' }]
      : [];
  const wanted = to.type === 'phone' ? 'phoneE164' : 'userId';
  const other = to.type === 'phone' ? 'userId' : 'phoneE164';
  return [
    ...(to[wanted] === undefined ? [{ path: `to.${wanted}`, message: 'is required' }] : []),
    ...(to[other] !== undefined ? [{ path: `to.${other}`, message: `is not allowed when to.type is ${to.type}` }] : []),
  ];
}

export function crossFieldProblems(body: unknown, opts: { allowPrivateUrls: boolean }): Problem[] {
  const toIssues = isObject(body) && 'to' in body ? toProblems(body.to) : [];
  return [...toIssues, ...contentProblems(body, opts)];
}

function contentProblems(body: unknown, opts: { allowPrivateUrls: boolean }): Problem[] {
  if (!isObject(body) || !isObject(body.content)) return [];
  const content = body.content;
  const type = content.type;
  if (typeof type !== 'string' || !(CONTENT_TYPES as readonly string[]).includes(type)) return [];
  const problems: Problem[] = [];
  for (const field of CONTENT_FIELDS) {
    const present = content[field] !== undefined;
    if (field === type && !present)
      problems.push({ path: `content.${field}`, message: `is required when content.type is ${type}` });
    if (field !== type && present)
      problems.push({ path: `content.${field}`, message: `is not allowed when content.type is ${type}` });
  }
  problems.push(...contentKindProblems(content, type, opts));
  if (body.replyTo !== undefined && type === 'reaction')
    problems.push({ path: 'replyTo', message: 'is not allowed when content.type is reaction' });
  if (isObject(body.replyTo)) problems.push(...messageRefProblems(body.replyTo, 'replyTo'));
  if (isObject(body.metadata) && Buffer.byteLength(JSON.stringify(body.metadata)) > MAX_METADATA_BYTES) {
    problems.push({ path: 'metadata', message: `must be at most ${MAX_METADATA_BYTES} bytes as JSON` });
  }
  return problems;
}

/** Values for a template's variables, media and buttons, as in content.template.components. */
export const TemplateComponents = IntakeFields.content.properties.template.properties.components;
