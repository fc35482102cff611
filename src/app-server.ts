// The API role of the composition root: the Fastify server, the API's routes under the caller
// hook, the portal, the provider webhook and the operator API, over the services of app-services.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';

import type { Services } from './app-services.js';
import type { Config } from './config.js';
import type { Db } from './db/db.js';
import type { DatabaseFaults } from './health/database-faults.js';
import type { ReadinessCheck } from './health/readiness.js';
import { registerCrossFieldValidation } from './http/cross-field.js';
import { createOperatorAuth } from './http/operator-auth.js';
import { registerPortal } from './http/portal/portal-plugin.js';
import { registerAdminPortalRoutes } from './http/routes/admin-portal-routes.js';
import { registerAdminRoutes } from './http/routes/admin-routes.js';
import { registerBroadcastRoutes } from './http/routes/broadcast-routes.js';
import { registerChatAccountRoutes } from './http/routes/chat-accounts-routes.js';
import { registerEventStreamRoutes } from './http/routes/event-stream-routes.js';
import { registerInboundMediaRoutes } from './http/routes/inbound-media-routes.js';
import { registerInboundRoutes } from './http/routes/inbound-routes.js';
import { createKeyAudit } from './http/routes/key-audit.js';
import { registerMediaRoutes } from './http/routes/media-routes.js';
import { registerMessageRoutes } from './http/routes/messages-routes.js';
import { registerMetaRoutes } from './http/routes/meta-routes.js';
import { registerMetricsRoute } from './http/routes/metrics-routes.js';
import { registerProviderWebhookRoutes } from './http/routes/provider-webhook-routes.js';
import { registerSuppressionRoutes } from './http/routes/suppression-routes.js';
import { registerTemplateRoutes } from './http/routes/templates-routes.js';
import { registerUsageRoutes } from './http/routes/usage-routes.js';
import { registerWebhookRoutes } from './http/routes/webhook-routes.js';
import { apiKeyAuth, createServer, type Server } from './http/server.js';
import { createRekey } from './secrets/rekey.js';

/** The API role's server, with every route registered (not listening yet). */
export function createApiServer(
  config: Config,
  deps: { db: Db; log: Logger; readiness: ReadinessCheck; faults?: DatabaseFaults; checkResponses?: boolean },
  s: Services,
): Server {
  const { log, readiness } = deps;
  const { metrics } = s;
  const server = createServer({
    log,
    bodyLimit: config.bodyLimitBytes,
    bodyReadTimeoutMs: config.bodyReadTimeoutMs,
    headersTimeoutMs: config.headersTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    maxConnections: config.maxConnections,
    maxConnectionsPerAddress: config.maxConnectionsPerAddress,
    trustProxy: config.trustProxy,
    checkResponses: deps.checkResponses,
    reportDatabaseFault: deps.faults ? (err) => void deps.faults!.report(err) : undefined,
    observeRequest: metrics.observeRequest,
  });
  registerMetaRoutes(server, { readiness, publicBaseUrl: config.publicBaseUrl });
  registerMetricsRoute(server, { metrics, token: config.metricsToken });
  registerApi(server, config, s);
  registerPortalPages(server, config, s);
  void server.register(async (plain) =>
    registerProviderWebhookRoutes(plain.withTypeProvider<TypeBoxTypeProvider>(), {
      receipts: s.receipts,
      verifyToken: config.providerVerifyToken,
    }),
  );
  registerOperatorApi(server, config, deps, s);
  return server;
}

/** The API: every route under the caller hook (the key's principal and its customer's tenant). */
function registerApi(api: Server, config: Config, s: Services): void {
  const { directory, keyUsage, sends, messageQueries, messageCancel, media, broadcasts, senders, settings } = s;
  const { suppressions, endpoints, templates, usage } = s;
  void api.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.addHook(
      'onRequest',
      apiKeyAuth({
        authenticate: async (raw) => {
          const principal = await directory.authenticate(raw);
          if (principal?.keyId) keyUsage.touch(principal.keyId);
          return principal;
        },
        tenant: directory.tenant,
      }),
    );
    const keyAudit = createKeyAudit(s.audit, s.keys);
    registerCrossFieldValidation(scope, { allowPrivateUrls: config.unsafeAllowPrivateUrls });
    registerMessageRoutes(scope, { sends, queries: messageQueries, cancels: messageCancel });
    registerChatAccountRoutes(scope, {
      publicBaseUrl: config.publicBaseUrl,
      messagingLimits: s.messagingLimits,
      directory,
      embeddedSignup: s.embeddedSignup,
    });
    registerMediaRoutes(scope, { media });
    registerBroadcastRoutes(scope, { broadcasts });
    registerInboundRoutes(scope, { senders, settings, audited: keyAudit });
    registerInboundMediaRoutes(scope, { files: s.inboundFiles, reads: s.reads });
    registerSuppressionRoutes(scope, { suppressions });
    registerWebhookRoutes(scope, { endpoints, audited: keyAudit });
    registerEventStreamRoutes(scope, { streams: s.eventStreams });
    registerTemplateRoutes(scope, { templates });
    registerUsageRoutes(scope, { usage });
  });
}

/** The portal's pages, on the same service instances as the API. */
function registerPortalPages(api: Server, config: Config, s: Services): void {
  const { directory, keys, messageQueries, messageCancel, broadcasts, senders, settings, endpoints } = s;
  const { templates, users, team, sessions, audit, portalQueries, usage, sends, conversations } = s;
  registerPortal(api, {
    publicBaseUrl: config.publicBaseUrl,
    // Cookie security follows the public base URL only (UNSAFE_ALLOW_PRIVATE_URLS is about outbound URLs).
    secureCookies: config.portalSecureCookies,
    allowPrivateUrls: config.unsafeAllowPrivateUrls,
    directory,
    keys,
    messages: messageQueries,
    messageCancel,
    broadcasts,
    senders,
    files: s.inboundFiles,
    conversations,
    sends,
    settings,
    endpoints,
    templates,
    users,
    team,
    sessions,
    audit,
    queries: portalQueries,
    usage,
    twoFactor: s.twoFactor,
    passwordResets: s.passwordResets,
    messagingLimits: s.messagingLimits,
    suppressions: s.suppressions,
    embeddedSignup: s.embeddedSignup,
  });
}

/** The operator API (ADMIN_TOKEN), off when no token is set. */
function registerOperatorApi(api: Server, config: Config, deps: { db: Db; log: Logger }, s: Services): void {
  const { db, log } = deps;
  const { customers, customerQueries, accounts, accountList, keys, inbound, users, sealer } = s;
  if (config.adminToken !== null) {
    const operatorAuth = createOperatorAuth(config.adminToken, config.adminMaxFailures);
    void api.register(async (plain) =>
      registerAdminRoutes(plain.withTypeProvider<TypeBoxTypeProvider>(), {
        operatorAuth,
        customers,
        customerQueries,
        accounts,
        accountList,
        keys,
        inbound,
        rekey: createRekey({ db, sealer }),
        audit: s.audit,
        providerApiVersion: config.providerApiVersion,
      }),
    );
    void api.register(async (plain) =>
      registerAdminPortalRoutes(plain.withTypeProvider<TypeBoxTypeProvider>(), { operatorAuth, users, audit: s.audit }),
    );
  } else {
    log.info(
      'ADMIN_TOKEN is not set: the operator API is off (set it, 16 characters or more, e.g. `openssl rand -hex 24`; on the embedded database `chatgate serve` makes one in DATA_DIR/admin-token)',
    );
  }
}
