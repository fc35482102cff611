// Error bodies of the operations added beyond the spec's first ones, documented as error-docs.ts
// documents the rest (and merged into its table): self-serve linking (decision 0076) and the
// event stream (decision 0072).
import { type ErrorDoc, providerDetail, str } from './error-doc-parts.js';

export const ADDED_DOCS = {
  signup_failed: {
    status: 422,
    schema: 'SignupFailedError',
    description:
      "Embedded Signup: the provider refused or failed one of its steps (the code's exchange, the app's subscription to the WABA, the number's registration, its read); nothing was linked. A code is good once and for a short time: run the flow again.",
    extra: {
      step: { type: 'string', enum: ['exchange_code', 'subscribe_app', 'register_number', 'read_number'] },
      message: str('What the provider said (secrets redacted).'),
      provider: providerDetail,
    },
    example: {
      error: 'signup_failed',
      step: 'register_number',
      message: 'the provider did not complete register number: Two step verification PIN Mismatch',
      provider: { httpStatus: 400, code: 133005 },
    },
  },
  stream_limit: {
    status: 429,
    schema: 'StreamLimitError',
    description: 'The customer already has the most event streams open at once (3, live and sandbox together).',
    extra: { limit: { type: 'integer', description: 'Streams open at once.' }, message: str('What to do.') },
    headers: { 'retry-after': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
  },
} satisfies Record<string, ErrorDoc>;
