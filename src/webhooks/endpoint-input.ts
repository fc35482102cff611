// What a customer may write into an endpoint, as schemas: the API's routes and the portal's forms
// validate with these same schemas (one owner), so both refuse the same input with the same words.
import { Type } from '@sinclair/typebox';

import { EVENT_TYPES } from '../shared/vocab.js';

export const EndpointUrl = Type.String({ minLength: 1, maxLength: 2048 });
/** Every event type can be subscribed to: the spec's, and the opt-in ones added beyond it. */
export const EndpointEvents = Type.Array(Type.Union(EVENT_TYPES.map((e) => Type.Literal(e))), {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
});
export const EndpointDescription = Type.String({ maxLength: 500 });

/** A new endpoint (POST /webhook-endpoints; the portal's form). */
export const CreateEndpointSchema = Type.Object(
  { url: EndpointUrl, events: Type.Optional(EndpointEvents), description: Type.Optional(EndpointDescription) },
  { additionalProperties: false },
);

/** A change (PATCH /webhook-endpoints/{id}; the portal's edit form). */
export const UpdateEndpointSchema = Type.Object(
  {
    url: Type.Optional(EndpointUrl),
    events: Type.Optional(EndpointEvents),
    description: Type.Optional(EndpointDescription),
    isActive: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
