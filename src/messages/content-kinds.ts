// The request schemas of the content kinds added beyond the spec (decision 0032): location,
// contact cards, interactive messages (reply buttons, lists, a call-to-action URL), reactions and
// the send's `replyTo`. The bounds are the provider's documented ones where it documents them
// (docs/provider-protocol-2026.md, "Outgoing message kinds"); the rest are ours and say so.
import { Type } from '@sinclair/typebox';

import { Uuid } from '../shared/schemas.js';

/** The provider's limits on interactive messages (Cloud API reference, "Interactive messages"). */
export const INTERACTIVE_LIMITS = {
  headerText: 60,
  bodyText: 1024,
  footerText: 60,
  buttons: 3,
  buttonId: 256,
  buttonTitle: 20,
  listButton: 20,
  sections: 10,
  rowsTotal: 10,
  rowId: 200,
  rowTitle: 24,
  rowDescription: 72,
  sectionTitle: 24,
  ctaDisplayText: 20,
  /** Flows: the button opening the Flow ("20 characters maximum, emoji not supported"). */
  flowCta: 20,
} as const;

/**
 * Our bounds on a flow message where the provider documents none: ids, names, tokens and screen
 * names, and the first screen's data (its JSON, in characters). Decision 0075.
 */
export const FLOW_LIMITS = { id: 100, name: 200, token: 1000, screen: 100, dataJson: 10_000 } as const;

/**
 * The longest text message the provider delivers (characters, as it counts them: code points).
 * The API accepts up to 10,000 (the spec's bound); a longer text than this is refused by the
 * provider (131009) after it was accepted here, so the portal refuses it before sending.
 */
export const PROVIDER_TEXT_MAX = 4096;

/** Our own bounds where the provider documents none (request sizes stay bounded). */
export const CONTACT_LIMITS = { cards: 20, perList: 20, field: 512 } as const;
export const LOCATION_TEXT_MAX = 1000;
/** An emoji is one grapheme; the longest (family, flag sequences) are well under this many UTF-16 units. */
export const EMOJI_MAX = 32;

const L = INTERACTIVE_LIMITS;
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const Obj = <T extends Parameters<typeof Type.Object>[0]>(props: T) =>
  Type.Object(props, { additionalProperties: false });

export const MediaRef = (withFilename: boolean) =>
  Obj({
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    mediaId: Type.Optional(Uuid()),
    ...(withFilename ? { filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) } : {}),
  });

export const LocationContent = Obj({
  latitude: Type.Number({ minimum: -90, maximum: 90 }),
  longitude: Type.Number({ minimum: -180, maximum: 180 }),
  name: Type.Optional(Text(LOCATION_TEXT_MAX)),
  address: Type.Optional(Text(LOCATION_TEXT_MAX)),
});

const field = Type.Optional(Text(CONTACT_LIMITS.field));
const typed = (value: string, max: number) =>
  Type.Array(Obj({ [value]: Text(max), type: Type.Optional(Text(32)) }), { maxItems: CONTACT_LIMITS.perList });

export const ContactCard = Obj({
  name: Obj({
    formattedName: Text(CONTACT_LIMITS.field),
    firstName: field,
    lastName: field,
    middleName: field,
    prefix: field,
    suffix: field,
  }),
  phones: Type.Optional(
    Type.Array(Obj({ phone: Text(64), type: Type.Optional(Text(32)), waId: Type.Optional(Text(32)) }), {
      maxItems: CONTACT_LIMITS.perList,
    }),
  ),
  emails: Type.Optional(typed('email', 320)),
  org: Type.Optional(Obj({ company: field, department: field, title: field })),
  urls: Type.Optional(typed('url', 2048)),
  addresses: Type.Optional(
    Type.Array(
      Obj({
        street: field,
        city: field,
        state: field,
        zip: Type.Optional(Text(32)),
        country: field,
        countryCode: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166 alpha-2.' })),
        type: Type.Optional(Text(32)),
      }),
      { maxItems: CONTACT_LIMITS.perList },
    ),
  ),
  birthday: Type.Optional(
    Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$', description: 'YYYY-MM-DD.' }),
  ),
});

export const ContactsContent = Type.Array(ContactCard, { minItems: 1, maxItems: CONTACT_LIMITS.cards });

export const InteractiveContent = Obj({
  type: Type.Union([Type.Literal('button'), Type.Literal('list'), Type.Literal('cta_url'), Type.Literal('flow')]),
  header: Type.Optional(
    Obj({
      type: Type.Union(['text', 'image', 'video', 'document'].map((t) => Type.Literal(t))),
      text: Type.Optional(Text(L.headerText)),
      image: Type.Optional(MediaRef(false)),
      video: Type.Optional(MediaRef(false)),
      document: Type.Optional(MediaRef(true)),
    }),
  ),
  body: Obj({ text: Text(L.bodyText) }),
  footer: Type.Optional(Obj({ text: Text(L.footerText) })),
  /** type `button`: the reply buttons. */
  buttons: Type.Optional(
    Type.Array(Obj({ id: Text(L.buttonId), title: Text(L.buttonTitle) }), { minItems: 1, maxItems: L.buttons }),
  ),
  /** type `list`: the button that opens the list, and its sections of rows. */
  list: Type.Optional(
    Obj({
      button: Text(L.listButton),
      sections: Type.Array(
        Obj({
          title: Type.Optional(Text(L.sectionTitle)),
          rows: Type.Array(
            Obj({ id: Text(L.rowId), title: Text(L.rowTitle), description: Type.Optional(Text(L.rowDescription)) }),
            { minItems: 1, maxItems: L.rowsTotal },
          ),
        }),
        { minItems: 1, maxItems: L.sections },
      ),
    }),
  ),
  /** type `cta_url`: one button opening an https URL. */
  ctaUrl: Type.Optional(
    Obj({ displayText: Text(L.ctaDisplayText), url: Type.String({ minLength: 1, maxLength: 2048 }) }),
  ),
  /** type `flow`: a button opening one of the business's WhatsApp Flows (decision 0075). */
  flow: Type.Optional(
    Obj({
      flowId: Type.Optional(
        Type.String({ minLength: 1, maxLength: FLOW_LIMITS.id, description: 'The Flow by id; or flowName.' }),
      ),
      flowName: Type.Optional(
        Type.String({ minLength: 1, maxLength: FLOW_LIMITS.name, description: 'The Flow by name; or flowId.' }),
      ),
      flowToken: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: FLOW_LIMITS.token,
          description: "Your token for this send; the user's reply carries it back (`flowReply.flowToken`).",
        }),
      ),
      cta: Type.String({ minLength: 1, maxLength: L.flowCta, description: 'The button text (no emoji).' }),
      action: Type.Optional(
        Type.Union([Type.Literal('navigate'), Type.Literal('data_exchange')], {
          description: '`navigate` (default): open `actionPayload.screen`; `data_exchange`: ask your Flow endpoint.',
        }),
      ),
      actionPayload: Type.Optional(
        Obj({
          screen: Type.String({ minLength: 1, maxLength: FLOW_LIMITS.screen, description: 'The first screen.' }),
          data: Type.Optional(
            Type.Record(Type.String(), Type.Unknown(), {
              description: "The first screen's input data (a non-empty object).",
            }),
          ),
        }),
      ),
      mode: Type.Optional(
        Type.Union([Type.Literal('published'), Type.Literal('draft')], {
          description: '`draft` to test a Flow not yet published.',
        }),
      ),
    }),
  ),
});

/** An earlier message of the same conversation: ours (messageId or externalId) or an inbound one. */
export const MessageRefFields = {
  messageId: Type.Optional(Uuid()),
  externalId: Type.Optional(Text(200)),
  inboundMessageId: Type.Optional(Uuid()),
};

export const ReactionContent = Obj({ ...MessageRefFields, emoji: Type.String({ maxLength: EMOJI_MAX }) });

/** POST /messages `replyTo`: the message this one answers (the provider's context). */
export const ReplyTo = Obj(MessageRefFields);
