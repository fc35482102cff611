// The answers of the operator API, Authorization: Bearer ADMIN_TOKEN (components, see
// src/http/openapi/route-docs.ts).
import { Type } from '@sinclair/typebox';

import { TEMPLATE_ACCESS } from '../../shared/vocab.js';
import { ChatAccount } from './accounts.js';
import { component, Enum, Id, Nullable, NullableTime, Page, Time } from './common.js';

/** A Graph API version's standing (GET /admin/provider; /readyz shows the same for the version in use). */
const ApiVersionFields = {
  state: Type.String({
    enum: ['current', 'expiring', 'expired', 'unknown'],
    description: 'expiring: within 90 days of its expiry; expired: the provider no longer serves it.',
  }),
  released: Nullable(Type.String({ format: 'date', description: 'Release date (UTC).' })),
  expires: Nullable(
    Type.String({ format: 'date', description: "The provider's published end of service; null: not published yet." }),
  ),
  daysLeft: Nullable(Type.Integer({ description: 'Days until `expires` (0 or less once expired).' })),
};

export const Customer = component(
  'Customer',
  Type.Object(
    {
      id: Id(),
      name: Type.String(),
      plan: Enum(['free', 'starter', 'basic', 'pro']),
      defaultCountry: Nullable(Type.String()),
      embeddedSignup: Nullable(
        Type.Boolean({
          description:
            "Self-serve linking with the provider's Embedded Signup (decision 0076): true or false for this customer; null: its plan decides (EMBEDDED_SIGNUP_PLANS).",
        }),
      ),
      createdAt: Time(),
      updatedAt: Time(),
      usage: Type.Optional(Type.Object({ month: Type.String(), used: Type.Integer(), limit: Type.Integer() })),
    },
    { additionalProperties: true },
  ),
);

export const CustomerPage = component('CustomerPage', Page('customers', Customer));

export const OperatorChatAccount = component(
  'OperatorChatAccount',
  Type.Intersect([
    ChatAccount,
    Type.Object(
      {
        customerId: Id(),
        portfolioId: Nullable(
          Type.String({ description: 'The business portfolio sharing its messaging limit (null: the account alone).' }),
        ),
        throughputMps: Type.Integer(),
        sendPace: Type.Number({
          description:
            "The fraction of throughputMps the account sends at now: lowered after the provider refused the number's throughput (130429), climbing back to 1 after quiet intervals (decision 0055).",
        }),
        marketingMessages: Type.Object(
          {
            enabled: Type.Boolean({
              description: 'MARKETING templates go over the Marketing Messages API (decision 0038).',
            }),
            refusedUntil: NullableTime(
              'Until when /messages carries them instead: the provider answered 131055 (not onboarded) and the API is tried again after this.',
            ),
          },
          { additionalProperties: true },
        ),
        probe: Nullable(
          Type.Object({
            nextAt: Time('When the next re-verification of a rejected token is due.'),
            attempts: Type.Integer({ description: 'Probes in a row that did not get the token accepted.' }),
          }),
        ),
      },
      { additionalProperties: true },
    ),
  ]),
);

export const OperatorChatAccountPage = component('OperatorChatAccountPage', Page('chatAccounts', OperatorChatAccount));

export const ApiKey = component(
  'ApiKey',
  Type.Object(
    {
      id: Id(),
      key: Type.Optional(Type.String({ description: 'The full key: only in the answer that creates it.' })),
      maskedKey: Type.String(),
      name: Nullable(Type.String()),
      sandbox: Type.Boolean(),
      chatAccountId: Nullable(Id()),
      templateAccess: Enum(TEMPLATE_ACCESS),
      createdAt: Time(),
      revokedAt: NullableTime(),
    },
    { additionalProperties: true },
  ),
);

export const ApiKeyList = component('ApiKeyList', Type.Object({ apiKeys: Type.Array(ApiKey) }));

export const RekeyResult = component(
  'RekeyResult',
  Type.Object(
    {
      keyId: Type.String({ description: 'The id of the key every value is now sealed with.' }),
      previousKeyId: Nullable(
        Type.String({ description: 'The key still needed for some values; null: ENCRYPTION_KEY_PREVIOUS may go.' }),
      ),
      resealed: Type.Integer({ description: 'Values re-sealed by this run.' }),
      remaining: Type.Integer({ description: 'Values still not under keyId (run again; 0 when done).' }),
      unreadable: Type.Integer({ description: 'Values neither key opens, left as they are.' }),
    },
    { additionalProperties: true },
  ),
);

export const ProviderSettings = component(
  'ProviderSettings',
  Type.Object(
    {
      ...ApiVersionFields,
      apiVersion: Type.String({ description: 'The Graph API version this process calls (PROVIDER_API_VERSION).' }),
      versions: Type.Array(
        Type.Object(
          { version: Type.String({ description: 'A Graph API version, e.g. v23.0.' }), ...ApiVersionFields },
          { additionalProperties: true },
        ),
        { description: 'Every version this release knows, newest first (docs/provider-protocol-2026.md).' },
      ),
    },
    { additionalProperties: true },
  ),
);

export const InboundIngested = component(
  'InboundIngested',
  Type.Object({ ingested: Type.Boolean(), duplicate: Type.Boolean() }, { additionalProperties: true }),
);

export const PortalUser = component(
  'PortalUser',
  Type.Object(
    {
      id: Id(),
      customerId: Id(),
      email: Type.String(),
      role: Enum(['owner', 'viewer']),
      status: Enum(['invited', 'active', 'disabled']),
      createdAt: Time(),
    },
    { additionalProperties: true },
  ),
);

export const PortalUserInvited = component(
  'PortalUserInvited',
  Type.Intersect([
    PortalUser,
    Type.Object({
      invitationUrl: Type.String({ description: 'One-time link to set the password: shown in this answer only.' }),
      expiresAt: Time('When the invitation link stops working.'),
    }),
  ]),
);

export const PortalUserList = component('PortalUserList', Type.Object({ users: Type.Array(PortalUser) }));
