// The values of a template send (content.template.components, decision 0068): text variables of
// the header and body, the header's file, button values by index and kind, carousel cards. The
// send and broadcast requests take this schema; templates/template-send.ts checks the values
// against the template's definition in the catalog.
import { type Static, Type } from '@sinclair/typebox';

import { Uuid } from './schemas.js';

export const MAX_TEMPLATE_VALUES = 100;
/** The provider's limits: up to 10 buttons per template, 10 cards per carousel. */
export const MAX_TEMPLATE_BUTTONS = 10;
export const MAX_CAROUSEL_CARDS = 10;

const Obj = <T extends Parameters<typeof Type.Object>[0]>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
const Values = Type.Array(Type.String({ minLength: 1, maxLength: 32768 }), { maxItems: MAX_TEMPLATE_VALUES });

export const BUTTON_SUB_TYPES = ['quick_reply', 'url', 'copy_code'] as const;

const HeaderMedia = (types: string[], description: string) =>
  Obj(
    {
      type: Type.Union(types.map((t) => Type.Literal(t))),
      url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
      mediaId: Type.Optional(Uuid()),
      filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    },
    description,
  );

const TemplateButton = Obj(
  {
    index: Type.Integer({
      minimum: 0,
      maximum: MAX_TEMPLATE_BUTTONS - 1,
      description: "The button's position in the template, from 0.",
    }),
    subType: Type.Union(
      BUTTON_SUB_TYPES.map((t) => Type.Literal(t)),
      {
        description:
          "The button's kind as the provider names it at send time: `quick_reply` (its payload), `url` (the variable part of a URL button, or the code of an authentication template's one-time-password button), `copy_code` (the coupon code).",
      },
    ),
    value: Type.String({ minLength: 1, maxLength: 2000 }),
  },
  'A value for one button of the template. Phone-number buttons and URL buttons without a variable take none.',
);

const Buttons = Type.Array(TemplateButton, { maxItems: MAX_TEMPLATE_BUTTONS });

export const TemplateComponentsSchema = Obj({
  body: Type.Optional(Values),
  header: Type.Optional(Values),
  headerMedia: Type.Optional(
    HeaderMedia(
      ['image', 'video', 'document'],
      'The file of a template whose header is an image, video or document: exactly one of `url` or `mediaId` (from POST /media). Addition (issue #35).',
    ),
  ),
  buttons: Type.Optional(Buttons),
  cards: Type.Optional(
    Type.Array(
      Obj({
        headerMedia: HeaderMedia(
          ['image', 'video'],
          "The card's image or video, by `url` (a carousel card takes no `mediaId`).",
        ),
        body: Type.Optional(Values),
        buttons: Type.Optional(Buttons),
      }),
      {
        minItems: 1,
        maxItems: MAX_CAROUSEL_CARDS,
        description: 'The cards of a carousel template, in order. Addition (issue #35).',
      },
    ),
  ),
});
export type TemplateComponents = Static<typeof TemplateComponentsSchema>;
export type TemplateButtonValue = Static<typeof TemplateButton>;

/** One set of a send's template values and where it sits in the request. */
export type TemplateVariant = { path: string; components: TemplateComponents | undefined };
