// The composition root: builds every service by hand and wires the roles of this process.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import pino, { type DestinationStream, type Logger } from 'pino';

import { createAccountAdmin } from './accounts/account-admin.js';
import { createAccountList } from './accounts/account-list.js';
import { createAccountProber } from './accounts/account-prober.js';
import { createDirectory } from './auth/directory.js';
import { createBroadcastService } from './broadcasts/broadcast-service.js';
import type { Config } from './config.js';
import { createConversationService } from './conversations/conversation-service.js';
import { createCustomerService } from './customers/customer-service.js';
import { createCustomerQueries } from './customers/customer-store.js';
import type { Db } from './db/db.js';
import { migrate } from './db/migrate.js';
import { openDb } from './db/open-db.js';
import { createDispatcher } from './dispatch/dispatcher.js';
import { createMediaPreparer } from './dispatch/prepare-media.js';
import { createReadiness } from './health/readiness.js';
import { closeServer } from './http/close-server.js';
import { registerCrossFieldValidation } from './http/cross-field.js';
import { createOperatorAuth } from './http/operator-auth.js';
import { registerPortal } from './http/portal/portal-plugin.js';
import { registerAdminPortalRoutes } from './http/routes/admin-portal-routes.js';
import { registerAdminRoutes } from './http/routes/admin-routes.js';
import { registerBroadcastRoutes } from './http/routes/broadcast-routes.js';
import { registerChatAccountRoutes } from './http/routes/chat-accounts-routes.js';
import { registerInboundRoutes } from './http/routes/inbound-routes.js';
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
import { createStatusServer } from './http/status-server.js';
import { createInboundService } from './inbound/inbound-service.js';
import { createSettingsService } from './inbound/settings-service.js';
import { createKeyService } from './keys/key-service.js';
import { createKeyUsage } from './keys/key-usage.js';
import { createMediaService } from './media/media-service.js';
import { createDbMediaStore } from './media/media-store.js';
import { createMessageCancel } from './messages/cancel-message.js';
import { createMessageQueries } from './messages/message-store.js';
import { createSendService } from './messages/send-service.js';
import { registerDbGauges } from './metrics/db-gauges.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { providerObserver } from './metrics/provider-observer.js';
import { webhookObserver } from './metrics/webhook-observer.js';
import { createOutboundClient, type Resolve, systemResolve } from './outbound/outbound-client.js';
import { createAuditLog } from './portal/audit-log.js';
import { createPortalQueries } from './portal/portal-store.js';
import { createSessionService } from './portal/session-service.js';
import { createUserService } from './portal/user-service.js';
import { apiVersionSummary, apiVersionWarning } from './provider/api-versions.js';
import { createProviderClient } from './provider/cloud-api.js';
import { createPurger } from './purge/purger.js';
import { createParkedReceiptSweep } from './receipts/parked-sweep.js';
import { createReceiptService } from './receipts/receipt-service.js';
import { checkEncryptionKey } from './secrets/key-check.js';
import { createRekey } from './secrets/rekey.js';
import { createSenderService } from './senders/sender-service.js';
import { createSealer } from './shared/crypto.js';
import { prettyStream } from './shared/pretty-log.js';
import { createSuppressionService } from './suppressions/suppression-service.js';
import { createTemplateCategories } from './templates/template-categories.js';
import { createTemplateService } from './templates/template-service.js';
import { createUsageService } from './usage/usage-service.js';
import { createDeliverer } from './webhooks/deliverer.js';
import { createEndpointService } from './webhooks/endpoint-service.js';

export type Role = 'all' | 'api' | 'worker';

/**
 * The service's logger: pino JSON on stdout (or `destination`), with secrets redacted by field name;
 * LOG_FORMAT=pretty writes readable lines instead (development).
 */
export function createLogger(
  config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'logFormat'>>,
  destination?: DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    redact: {
      paths: [
        'req.headers["x-api-key"]',
        'req.headers.authorization',
        '*.accessToken',
        '*.appSecret',
        '*.managementToken',
        '*.key',
      ],
      censor: '[redacted]',
    },
    // A parse error from Node's HTTP server carries the raw request bytes (`rawPacket`): keys,
    // cookies and Authorization headers past the redaction above. No error is logged with them.
    serializers: {
      err: (err: Error) => {
        const { rawPacket: _raw, ...rest } = pino.stdSerializers.err(err) as { rawPacket?: unknown };
        return rest;
      },
    },
  };
  if (config.logFormat === 'pretty') return pino(options, prettyStream(destination ?? process.stdout));
  return destination ? pino(options, destination) : pino(options);
}

/** Embedded mode only: a key generated once and kept beside the data (PostgreSQL mode requires ENCRYPTION_KEY). */
function embeddedEncryptionKey(dataDir: string): Buffer {
  const file = path.join(dataDir, 'encryption.key');
  fs.mkdirSync(dataDir, { recursive: true });
  if (!fs.existsSync(file))
    fs.writeFileSync(file, crypto.randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
}

export type App = {
  db: Db;
  log: Logger;
  metrics: Metrics;
  server: Server | null;
  /**
   * Listens (api role) and starts the workers (worker role). Returns the bound address, if any:
   * the API's, or a worker-only process's status server (WORKER_STATUS_PORT).
   */
  start(): Promise<string | null>;
  stop(): Promise<void>;
};

export async function createApp(
  config: Config,
  opts: {
    role?: Role;
    db?: Db;
    log?: Logger;
    resolve?: Resolve;
    /** Tests: fail any answer that serialization changed (src/http/response-check.ts). */
    checkResponses?: boolean;
  } = {},
): Promise<App> {
  const role = opts.role ?? 'all';
  const log = opts.log ?? createLogger(config);
  const db = opts.db ?? (await openDb(config, { log }));
  const applied = await migrate(db);
  if (applied.length > 0) log.info({ applied }, 'migrations applied');
  if (config.unsafeAllowPrivateUrls)
    log.warn(
      'UNSAFE_ALLOW_PRIVATE_URLS=true: outbound URLs may use http and private or loopback hosts; never in production',
    );

  const versionWarning = apiVersionWarning('PROVIDER_API_VERSION', config.providerApiVersion);
  if (versionWarning) log.warn({ providerApiVersion: config.providerApiVersion }, versionWarning);

  if (config.trustProxy === true)
    log.warn(
      "TRUST_PROXY=true is read as one proxy hop (the address the nearest proxy saw); set the hop count or the proxies' addresses instead",
    );

  const metrics = createMetrics({ maxIdLabels: config.metricsMaxIdLabels });
  registerDbGauges(metrics, { db, log, quotaTopN: config.metricsQuotaTopN });
  const sealer = createSealer({
    current: config.encryptionKey ?? embeddedEncryptionKey(config.dataDir),
    previous: config.encryptionKeyPrevious,
  });
  const keyCheck = await checkEncryptionKey(
    db,
    sealer,
    config.encryptionKey ? 'ENCRYPTION_KEY' : `ENCRYPTION_KEY (unset: ${path.join(config.dataDir, 'encryption.key')})`,
  );
  if (keyCheck !== 'ok')
    log.info({ keyId: sealer.keyId, previousKeyId: sealer.previousKeyId }, `encryption key ${keyCheck}`);
  if (sealer.previousKeyId)
    log.warn(
      { keyId: sealer.keyId, previousKeyId: sealer.previousKeyId },
      'ENCRYPTION_KEY_PREVIOUS is set: run `chatgate admin rekey`, then remove it and restart',
    );
  const directory = createDirectory(db);
  const mediaStore = createDbMediaStore(db);
  const media = createMediaService({ db, store: mediaStore, unusedTtlSeconds: config.mediaUnusedTtlSeconds });
  const sends = createSendService({ db, maxSendAttempts: config.maxSendAttempts, media, metrics });
  const resolve = opts.resolve ?? systemResolve;
  const outbound = createOutboundClient({ allowPrivate: config.unsafeAllowPrivateUrls, resolve });
  // Every live send in flight may be waiting on the provider: as many connections (opened only
  // when needed), so undici never queues a send behind the in-flight cap.
  const provider = createProviderClient({
    baseUrl: config.providerBaseUrl,
    apiVersion: config.providerApiVersion,
    timeoutMs: config.providerTimeoutMs,
    connections: config.workerMaxInFlight,
    observe: providerObserver(metrics),
  });

  // One instance of each service, shared by the API, the operator API and the portal.
  const keys = createKeyService({ db, sealer, directory });
  const keyUsage = createKeyUsage({ db, onError: (err) => log.warn({ err }, 'could not record key use') });
  const messageQueries = createMessageQueries(db);
  const messageCancel = createMessageCancel({ db, queries: messageQueries });
  const broadcasts = createBroadcastService({ db, maxSendAttempts: config.maxSendAttempts, media, metrics });
  const senders = createSenderService({ db });
  const settings = createSettingsService({ db, allowPrivateUrls: config.unsafeAllowPrivateUrls, resolve });
  const endpoints = createEndpointService({ db, sealer, allowPrivateUrls: config.unsafeAllowPrivateUrls, resolve });
  const templates = createTemplateService({ db, sealer, provider, directory });
  const suppressions = createSuppressionService({ db });
  const templateCategories = createTemplateCategories({ db, sealer, provider });
  const users = createUserService({
    db,
    publicBaseUrl: config.publicBaseUrl,
    invitationHours: config.portalInvitationHours,
    maxFailuresPerAccount: config.portalLoginMaxFailures,
    maxFailuresPerAddress: config.portalLoginMaxFailuresPerAddress,
  });
  const sessions = createSessionService({
    db,
    sealer,
    idleMinutes: config.portalSessionIdleMinutes,
    absoluteHours: config.portalSessionAbsoluteHours,
  });
  const audit = createAuditLog(db);
  const portalQueries = createPortalQueries(db);
  const customers = createCustomerService({ db, invalidate: directory.invalidate });
  const accounts = createAccountAdmin({
    db,
    sealer,
    invalidate: directory.invalidate,
    publicBaseUrl: config.publicBaseUrl,
    provider,
  });
  const customerQueries = createCustomerQueries(db);
  const usage = createUsageService({ db });
  const accountList = createAccountList({ db, publicBaseUrl: config.publicBaseUrl });
  const inbound = createInboundService({ db, log, client: outbound, metrics });
  const receipts = createReceiptService({ db, sealer, appSecret: config.providerAppSecret, log, inbound, metrics });

  const readiness = createReadiness({
    db,
    log,
    details: () => ({ provider: apiVersionSummary(config.providerApiVersion) }),
  });
  let server: Server | null = null;
  const statusServer =
    role === 'worker' && config.workerStatusPort !== null
      ? createStatusServer({ log, readiness, metrics, metricsToken: config.metricsToken })
      : null;
  if (role !== 'worker') {
    server = createServer({
      log,
      bodyLimit: config.bodyLimitBytes,
      bodyReadTimeoutMs: config.bodyReadTimeoutMs,
      headersTimeoutMs: config.headersTimeoutMs,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
      maxConnections: config.maxConnections,
      trustProxy: config.trustProxy,
      checkResponses: opts.checkResponses,
    });
    registerMetaRoutes(server, { readiness, publicBaseUrl: config.publicBaseUrl });
    registerMetricsRoute(server, { metrics, token: config.metricsToken });
    const api = server;
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
      registerCrossFieldValidation(scope, { allowPrivateUrls: config.unsafeAllowPrivateUrls });
      registerMessageRoutes(scope, { sends, queries: messageQueries, cancels: messageCancel });
      registerChatAccountRoutes(scope, { publicBaseUrl: config.publicBaseUrl });
      registerMediaRoutes(scope, { media });
      registerBroadcastRoutes(scope, { broadcasts });
      registerInboundRoutes(scope, { senders, settings });
      registerSuppressionRoutes(scope, { suppressions });
      registerWebhookRoutes(scope, { endpoints });
      registerTemplateRoutes(scope, { templates });
      registerUsageRoutes(scope, { usage });
    });
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
      conversations: createConversationService({ db, senders, messages: messageQueries }),
      sends,
      settings,
      endpoints,
      templates,
      users,
      sessions,
      audit,
      queries: portalQueries,
      usage,
    });
    void api.register(async (plain) =>
      registerProviderWebhookRoutes(plain.withTypeProvider<TypeBoxTypeProvider>(), {
        receipts,
        verifyToken: config.providerVerifyToken,
      }),
    );
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
          providerApiVersion: config.providerApiVersion,
        }),
      );
      void api.register(async (plain) =>
        registerAdminPortalRoutes(plain.withTypeProvider<TypeBoxTypeProvider>(), { operatorAuth, users }),
      );
    } else {
      log.info('ADMIN_TOKEN is not set: the operator API is off');
    }
  }

  const workers =
    role === 'api'
      ? []
      : [
          createDispatcher({
            db,
            log,
            provider,
            media: createMediaPreparer({
              db,
              store: mediaStore,
              provider,
              outbound,
              retryTimeScale: config.retryTimeScale,
              fetchTimeoutMs: config.mediaFetchTimeoutMs,
            }),
            sealer,
            invalidateCustomer: directory.invalidate,
            categories: templateCategories,
            blockedMarkets: config.marketingBlockedMarkets,
            onLateSends: (outcome, n) => metrics.lateSends.inc({ outcome }, n),
            onPairHeld: (n) => metrics.pairHeldSends.inc(n),
            options: {
              batchSize: config.workerBatchSize,
              leaseSeconds: config.workerLeaseSeconds,
              pollMs: config.workerPollMs,
              sandboxStepMs: config.sandboxStepMs,
              retryTimeScale: config.retryTimeScale,
              maxInFlight: config.workerMaxInFlight,
              maxMediaSteps: config.maxMediaSteps,
              pacingHorizonMs: config.dispatchPacingHorizonMs,
              firstAccountProbeDelayMs: config.accountProbeFirstDelayScaledMs,
              pairSpacingMs: config.pairRateSpacingMs,
            },
          }),
          createParkedReceiptSweep({ db, log, intervalMs: config.parkedSweepMs }),
          createAccountProber({
            db,
            log,
            sealer,
            provider,
            invalidateCustomer: directory.invalidate,
            options: {
              pollMs: config.workerPollMs,
              firstDelayMs: config.accountProbeFirstDelaySeconds * 1000,
              maxDelayMs: config.accountProbeMaxDelaySeconds * 1000,
              retryTimeScale: config.retryTimeScale,
              leaseSeconds: config.accountProbeLeaseSeconds,
            },
          }),
          createDeliverer({
            db,
            log,
            sealer,
            client: outbound,
            observe: webhookObserver(metrics),
            options: {
              batchSize: config.workerBatchSize,
              leaseSeconds: config.webhookLeaseSeconds,
              pollMs: config.workerPollMs,
              retryTimeScale: config.retryTimeScale,
              perEndpointConcurrency: config.webhookPerEndpointConcurrency,
              maxInFlight: config.webhookMaxInFlight,
            },
          }),
          createPurger({ db, log, intervalSeconds: config.purgeIntervalSeconds }),
        ];

  let stopListening: (() => Promise<void>) | null = null;
  let stopped = false;

  return {
    db,
    log,
    metrics,
    server,
    async start() {
      stopListening = await directory.start();
      for (const w of workers) await w.start();
      if (statusServer) {
        const address = await statusServer.listen({ port: config.workerStatusPort ?? 0, host: config.host });
        log.info({ address, role, database: db.kind }, 'worker status listening');
        return address;
      }
      if (!server) return null;
      const address = await server.listen({ port: config.port, host: config.host });
      log.info({ address, role, database: db.kind }, 'chatgate listening');
      return address;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await statusServer?.close();
      // The API and the workers wind down side by side: the server stops accepting and lets
      // requests in flight finish (cutting those still being read after a grace: a stalled upload
      // must not hold the shutdown for BODY_READ_TIMEOUT_MS), while each worker finishes and
      // records what it has started and releases its leases.
      const graceMs = config.shutdownRequestGraceMs;
      await Promise.all([
        (async () => {
          if (server) await closeServer(server, graceMs);
          await sends.drain();
          await keyUsage.drain();
        })(),
        ...workers.map((w) => w.stop()),
      ]);
      await stopListening?.();
      await provider.close();
      await outbound.close();
      if (!opts.db) await db.close();
    },
  };
}
