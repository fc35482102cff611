// GET /chat-accounts: the caller's accounts (a scoped key sees only its own). POST
// /chat-accounts/embedded-signup: the customer links its own number with the provider's Embedded
// Signup (decision 0076).
import { Type } from '@sinclair/typebox';

import { toPublicAccount } from '../../accounts/account-view.js';
import type { MessagingLimits } from '../../accounts/messaging-limits.js';
import { visibleAccounts } from '../../auth/caller.js';
import type { Directory } from '../../auth/directory.js';
import type { EmbeddedSignup } from '../../signup/embedded-signup.js';
import { ChatAccount, ChatAccountList } from '../schemas/accounts.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

const ProviderId = (description: string) =>
  Type.String({ minLength: 1, maxLength: 100, pattern: '^[0-9A-Za-z_.-]+$', description });

export const SignupRequest = Type.Object(
  {
    code: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: "The login's `code` (FB.login's `authResponse.code`; exchanged once, within a short time).",
    }),
    wabaId: ProviderId("The session's `waba_id` (the SDK's `WA_EMBEDDED_SIGNUP` message event)."),
    phoneNumberId: ProviderId("The session's `phone_number_id`."),
    businessId: Type.Optional(ProviderId("The session's `business_id` (kept for nothing yet; accepted).")),
    pin: Type.String({
      pattern: '^[0-9]{6}$',
      description: "Six digits: the number's two-step verification PIN, set (or checked) when we register it.",
    }),
  },
  { additionalProperties: false },
);

export function registerChatAccountRoutes(
  app: Server,
  deps: {
    publicBaseUrl: string;
    messagingLimits: Pick<MessagingLimits, 'of'>;
    directory: Pick<Directory, 'tenant'>;
    embeddedSignup: Pick<EmbeddedSignup, 'link'>;
  },
) {
  app.get(
    '/chat-accounts',
    {
      schema: {
        operationId: 'listChatAccounts',
        summary: 'Your linked chat accounts',
        tags: ['chat accounts'],
        security: [{ apiKey: [] }],
        response: { 200: ChatAccountList },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const visible = visibleAccounts(caller);
      const limits = await deps.messagingLimits.of(visible);
      return {
        accounts: visible.map((a) => toPublicAccount(a, caller.tenant.plan, deps.publicBaseUrl, limits.get(a.id))),
      };
    },
  );

  app.post(
    '/chat-accounts/embedded-signup',
    {
      schema: {
        operationId: 'linkChatAccountBySignup',
        summary: 'Link your own number with the provider’s Embedded Signup',
        description:
          "Finishes the provider's Embedded Signup (v4) that your page ran with the provider's JS SDK: we exchange the code for a business token (sealed), subscribe our app to the WABA's webhooks, register the number with the PIN and link it as an OFFICIAL account. Off unless the operator configured it, and per plan or customer. Not with a sandbox key or a key scoped to one account.",
        tags: ['chat accounts'],
        security: [{ apiKey: [] }],
        body: SignupRequest,
        response: { 201: ChatAccount },
        'x-errors': [
          'validation_error',
          'feature_not_available',
          'sandbox_not_supported',
          'key_scope_insufficient',
          'signup_failed',
          'already_exists',
          'limit_reached',
        ],
        'x-examples': {
          signup: {
            summary: 'What the SDK gave the page',
            value: { code: 'AQBx…', wabaId: '102290129340398', phoneNumberId: '106540352242922', pin: '123456' },
          },
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const linked = await deps.embeddedSignup.link(caller, request.body);
      const tenant = (await deps.directory.tenant(caller.tenant.customerId)) ?? caller.tenant;
      const account = tenant.accounts.find((a) => a.id === linked.id)!;
      const limits = await deps.messagingLimits.of([account]);
      return reply.code(201).send(toPublicAccount(account, tenant.plan, deps.publicBaseUrl, limits.get(account.id)));
    },
  );
}
