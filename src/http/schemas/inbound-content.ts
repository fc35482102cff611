// The content of an inbound message by kind (decision 0033): the fields of InboundMessage (GET
// /inbound-messages, GET /inbound-messages/{id}) and of the data of message.inbound (events.ts),
// and the users' reactions shown on a message (components, see src/http/openapi/route-docs.ts).
// Each kind's field is null unless the message is of that kind.
import { Type } from '@sinclair/typebox';

import { component, Id, Nullable, Time } from './common.js';

const Str = Nullable(Type.String());

export const InboundMedia = component(
  'InboundMedia',
  Type.Object(
    {
      kind: Type.String({ enum: ['image', 'video', 'audio', 'document', 'sticker'] }),
      providerMediaId: Nullable(
        Type.String({ description: "The provider's media id (it expires 7 days after the message)." }),
      ),
      mimeType: Str,
      sha256: Str,
      caption: Nullable(Type.String({ maxLength: 1024, description: 'Image, video and document only.' })),
      filename: Nullable(Type.String({ description: 'Document only.' })),
      voice: Nullable(Type.Boolean({ description: 'Audio only: true for a voice note recorded in the app.' })),
      animated: Nullable(Type.Boolean({ description: 'Sticker only.' })),
      // The fetch of the file (decision 0034): on inbound messages of the inbox, not in events.
      state: Type.Optional(
        Type.String({
          enum: ['pending', 'fetched', 'failed', 'skipped_too_large', 'skipped_type'],
          description: 'Inbox only: the fetch of the file; GET /inbound-messages/{id}/media serves it once `fetched`.',
        }),
      ),
      size: Type.Optional(Nullable(Type.Integer({ description: 'Bytes, once the provider said or the file came.' }))),
      attempts: Type.Optional(Type.Integer({ description: 'Fetch attempts so far.' })),
      error: Type.Optional(Nullable(Type.String({ description: "The last fetch attempt's error." }))),
      fetchedAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
    },
    {
      description:
        "A medium's description from the provider; on the inbox's messages also the fetch of the file (`state`…), which GET /inbound-messages/{id}/media serves.",
    },
  ),
);

export const InboundInteractive = component(
  'InboundInteractive',
  Type.Object(
    {
      type: Type.String({
        description:
          "`button_reply`, `list_reply`, `nfm_reply` (a Flow's answer), or another reply type the provider adds.",
      }),
      id: Nullable(Type.String({ description: 'The id of the chosen button or row, as you sent it.' })),
      title: Str,
      description: Nullable(Type.String({ description: 'list_reply: the row description.' })),
      flowReply: Nullable(
        Type.Object(
          {
            name: Nullable(Type.String({ description: '`flow` (or `address_message`).' })),
            body: Str,
            response: Type.Unknown({
              description:
                "The Flow's answer: the provider's `response_json` parsed (an object); null when it was not valid JSON or too long.",
            }),
            responseRaw: Nullable(
              Type.String({
                maxLength: 20000,
                description:
                  'The `response_json` text when it was not parsed (invalid or too long: then cut); else null.',
              }),
            ),
            invalidJson: Type.Boolean({ description: '`response_json` was not valid JSON (kept in `responseRaw`).' }),
            truncated: Type.Boolean({
              description: '`response_json` was longer than 20,000 characters (its start kept in `responseRaw`).',
            }),
            flowToken: Nullable(
              Type.String({ description: "The answer's `flow_token`: the `flowToken` you sent the Flow with." }),
            ),
          },
          { description: "nfm_reply: the Flow's answer; `replyTo` names your flow message. Null on other replies." },
        ),
      ),
    },
    { description: 'A reply to an interactive message; `replyTo` names the message it answered.' },
  ),
);

export const InboundReaction = component(
  'InboundReaction',
  Type.Object({
    emoji: Nullable(Type.String({ description: 'null: the user removed the reaction.' })),
    providerMessageId: Nullable(Type.String({ description: 'The message reacted to.' })),
    messageId: Nullable(Id('Yours, when it is one of your messages.')),
    externalId: Str,
  }),
);

export const InboundContact = component(
  'InboundContact',
  Type.Object({
    name: Type.Object({ formattedName: Str, firstName: Str, lastName: Str }),
    phones: Type.Array(Type.Object({ phone: Str, waId: Str, type: Str }), { maxItems: 10 }),
    emails: Type.Array(Type.Object({ email: Str, type: Str }), { maxItems: 10 }),
    organization: Nullable(Type.Object({ company: Str, department: Str, title: Str })),
    urls: Type.Array(Type.Object({ url: Str, type: Str }), { maxItems: 10 }),
    birthday: Str,
  }),
);

export const InboundReferral = component(
  'InboundReferral',
  Type.Object(
    {
      sourceUrl: Nullable(Type.String({ description: 'The ad or post the user came from.' })),
      sourceId: Nullable(Type.String({ description: "The ad's or post's id." })),
      sourceType: Nullable(Type.String({ description: '`ad` or `post`.' })),
      headline: Str,
      body: Str,
      mediaType: Nullable(Type.String({ description: '`image` or `video`.' })),
      imageUrl: Str,
      videoUrl: Str,
      thumbnailUrl: Str,
      ctwaClid: Nullable(Type.String({ description: 'The click id of a click-to-chat ad, for conversion reporting.' })),
    },
    {
      description:
        "Click-to-chat ad attribution: the ad or post the user came from (the provider sends it on the first message after the click). On a Sender (`firstReferral`): the sender's first message's, present only when it came from one.",
    },
  ),
);

export const InboundOrder = component(
  'InboundOrder',
  Type.Object(
    {
      catalogId: Str,
      text: Nullable(Type.String({ description: "The user's note with the order." })),
      productItems: Type.Array(
        Type.Object({
          productRetailerId: Nullable(Type.String({ description: "The product's id in your catalog (SKU)." })),
          quantity: Nullable(Type.Number()),
          itemPrice: Nullable(Type.Number({ description: 'The unit price, in `currency`.' })),
          currency: Str,
        }),
        { maxItems: 100 },
      ),
    },
    { description: 'A cart sent from your catalog.' },
  ),
);

/** A user's current reaction to one of your messages (GET /messages/{id} `reactions`). */
export const MessageReaction = component(
  'MessageReaction',
  Type.Object({
    emoji: Type.String(),
    from: Nullable(Type.String({ description: 'E.164' })),
    fromUserId: Str,
    reactedAt: Time(),
    inboundMessageId: Nullable(Id('The reaction in your inbox, when the inbox kept it (plan Pro).')),
  }),
);

/** The content fields, each null unless the message is of its kind (providerErrors: [] when none). */
export const inboundContentProps = {
  media: Nullable(InboundMedia),
  interactive: Nullable(InboundInteractive),
  button: Nullable(
    Type.Object(
      { payload: Str, text: Str },
      { description: "A template's quick-reply button tapped; `replyTo` names the template message." },
    ),
  ),
  reaction: Nullable(InboundReaction),
  location: Nullable(
    Type.Object({
      latitude: Nullable(Type.Number()),
      longitude: Nullable(Type.Number()),
      name: Str,
      address: Str,
      url: Str,
    }),
  ),
  contacts: Nullable(Type.Array(InboundContact, { maxItems: 20 })),
  system: Nullable(Type.Object({ type: Str, body: Str }, { description: 'e.g. user_changed_number.' })),
  unsupported: Nullable(
    Type.Object(
      { type: Str },
      {
        description:
          "What the provider could not carry, or a provider item we could not read as a message (no sender, no id or no time: `type` is the item's own type).",
      },
    ),
  ),
  order: Nullable(InboundOrder),
  referral: Nullable(InboundReferral),
  providerErrors: Type.Array(
    Type.Object({ code: Nullable(Type.Integer()), title: Str, details: Str }, { description: 'e.g. 131051.' }),
    { maxItems: 5 },
  ),
  context: Nullable(
    Type.Object(
      {
        forwarded: Type.Boolean(),
        frequentlyForwarded: Type.Boolean(),
        referredProduct: Nullable(Type.Object({ catalogId: Str, productRetailerId: Str })),
      },
      { description: 'Forwarding and product context; the quoted message is `replyTo`.' },
    ),
  ),
};
