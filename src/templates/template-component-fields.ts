// The request fields of a template's components at creation (decision 0068, additions to POST
// /chat-accounts/{id}/templates): header, footer, buttons, authentication, carousel cards, with
// the provider's limits. Their rules and provider form are template-components.ts'.
import { Type } from '@sinclair/typebox';

/** The provider's limits (template components reference). */
export const COMPONENT_LIMITS = {
  headerText: 60,
  footerText: 60,
  buttonText: 25,
  buttons: 10,
  urlButtons: 2,
  phoneButtons: 1,
  copyCodeButtons: 1,
  copyCodeExample: 15,
  cards: 10,
  cardBody: 160,
  cardButtons: 2,
  codeExpirationMinutes: 90,
} as const;
const L = COMPONENT_LIMITS;

const Obj = <T extends Parameters<typeof Type.Object>[0]>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const Handle = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: "An example file's handle from the provider's Resumable Upload API (its `h` value).",
});

export const HeaderDefinition = Obj(
  {
    format: Type.Union(['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT'].map((f) => Type.Literal(f))),
    text: Type.Optional(Text(L.headerText)),
    example: Type.Optional(Type.String({ minLength: 1, maxLength: L.headerText })),
    exampleHandle: Type.Optional(Handle),
  },
  'TEXT: `text` with at most one variable (and its `example`); IMAGE, VIDEO, DOCUMENT: `exampleHandle`. Addition (issue #35).',
);

export const ButtonDefinition = Obj(
  {
    type: Type.Union(['QUICK_REPLY', 'URL', 'PHONE_NUMBER', 'COPY_CODE'].map((t) => Type.Literal(t))),
    text: Type.Optional(Text(L.buttonText)),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    example: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    phoneNumber: Type.Optional(Type.String({ minLength: 2, maxLength: 20 })),
  },
  'QUICK_REPLY: `text`. URL: `text` and an https `url`, which may end in one variable `{{1}}` (then `example`, the full URL). PHONE_NUMBER: `text` and `phoneNumber` (E.164). COPY_CODE: `example` (the code, at most 15 characters), no text.',
);
const Buttons = (max: number) => Type.Array(ButtonDefinition, { minItems: 1, maxItems: max });

export const AuthenticationDefinition = Obj(
  {
    otpType: Type.Union([Type.Literal('COPY_CODE'), Type.Literal('ONE_TAP')]),
    addSecurityRecommendation: Type.Optional(Type.Boolean()),
    codeExpirationMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: L.codeExpirationMinutes })),
    buttonText: Type.Optional(Text(L.buttonText)),
    autofillText: Type.Optional(Text(L.buttonText)),
    packageName: Type.Optional(Type.String({ minLength: 1, maxLength: 224 })),
    signatureHash: Type.Optional(Type.String({ minLength: 11, maxLength: 11 })),
  },
  "An authentication template (category AUTHENTICATION, no body: the provider's preset text carries the code): its one-time-password button, copy code or one-tap (ONE_TAP: the Android app's `packageName` and `signatureHash`). Addition (issue #35).",
);

export const CardDefinition = Obj({
  header: Obj({
    format: Type.Union([Type.Literal('IMAGE'), Type.Literal('VIDEO')]),
    exampleHandle: Handle,
  }),
  body: Text(L.cardBody),
  examples: Type.Optional(Type.Array(Obj({ name: Text(100), text: Text(L.cardBody) }), { maxItems: 10 })),
  buttons: Buttons(L.cardButtons),
});

/** The fields CreateTemplateSchema adds for components (all optional). */
export const ComponentFields = {
  header: Type.Optional(HeaderDefinition),
  footer: Type.Optional(Text(L.footerText)),
  buttons: Type.Optional(Buttons(L.buttons)),
  authentication: Type.Optional(AuthenticationDefinition),
  cards: Type.Optional(
    Type.Array(CardDefinition, {
      minItems: 1,
      maxItems: L.cards,
      description:
        'The cards of a carousel template: each an image or video header, a body and one or two buttons, all cards alike. Addition (issue #35).',
    }),
  ),
};
