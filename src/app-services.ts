// The composition root's services: one instance of each, shared by the API, the operator API, the
// portal and the workers. app.ts builds them here, then wires the roles of the process from them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import type { Logger } from 'pino';

import { createAccountAdmin } from './accounts/account-admin.js';
import { createAccountList } from './accounts/account-list.js';
import { createMessagingLimits } from './accounts/messaging-limits.js';
import { createDirectory } from './auth/directory.js';
import { createBroadcastService } from './broadcasts/broadcast-service.js';
import type { Config } from './config.js';
import { createConversationService } from './conversations/conversation-service.js';
import { createCustomerService } from './customers/customer-service.js';
import { createCustomerQueries } from './customers/customer-store.js';
import type { Db } from './db/db.js';
import { createReadMarker } from './dispatch/mark-read.js';
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
import { createOutboundClient, type Resolve, systemResolve } from './outbound/outbound-client.js';
import { createAuditLog } from './portal/audit-log.js';
import { createMailer } from './portal/mailer.js';
import { createPasswordResetService } from './portal/password-reset-service.js';
import { createPortalQueries } from './portal/portal-store.js';
import { createSessionService } from './portal/session-service.js';
import { createTeamService } from './portal/team-service.js';
import { createTwoFactorService } from './portal/two-factor-service.js';
import { createUserService } from './portal/user-service.js';
import { createProviderClient } from './provider/cloud-api.js';
import { createReceiptService } from './receipts/receipt-service.js';
import { checkEncryptionKey } from './secrets/key-check.js';
import { createInboundFiles } from './senders/inbound-files.js';
import { createSenderService } from './senders/sender-service.js';
import type { Sealer } from './shared/crypto.js';
import { createSealer } from './shared/crypto.js';
import { createEmbeddedSignup } from './signup/embedded-signup.js';
import { createSuppressionService } from './suppressions/suppression-service.js';
import { createTemplateCatalog } from './templates/template-catalog.js';
import { createTemplateCategories } from './templates/template-categories.js';
import { createTemplateService } from './templates/template-service.js';
import { createUsageService } from './usage/usage-service.js';
import { createEndpointService } from './webhooks/endpoint-service.js';
import { createEventStreamService } from './webhooks/event-stream.js';

/** Every service of the process, built once. */
export type Services = Awaited<ReturnType<typeof createServices>>;

export async function createServices(config: Config, deps: { db: Db; log: Logger; resolve?: Resolve }) {
  const { db, log } = deps;
  const metrics = createMetrics({ maxIdLabels: config.metricsMaxIdLabels });
  registerDbGauges(metrics, { db, log, quotaTopN: config.metricsQuotaTopN });
  const sealer = await openSealer(config, db, log);
  const platform = createPlatform(config, { db, metrics, sealer, resolve: deps.resolve ?? systemResolve });
  const capabilities = createCapabilities(config, { db, log, metrics, sealer, ...platform });
  const { provider } = platform;
  const embeddedSignup = createSelfServeLinking(config, { db, provider, accounts: capabilities.accounts });
  // GET /events/stream's streams (decision 0072).
  const eventStreams = createEventStreamService({ db, log });
  return { metrics, sealer, ...platform, eventStreams, ...capabilities, embeddedSignup };
}

/** The sealer of stored secrets, checked against the key the database was sealed with. */
async function openSealer(config: Config, db: Db, log: Logger) {
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
  return sealer;
}

/** What the capabilities are built on: the directory, uploads, the send intake, the outbound clients. */
function createPlatform(config: Config, deps: { db: Db; metrics: Metrics; sealer: Sealer; resolve: Resolve }) {
  const { db, metrics, sealer, resolve } = deps;
  const directory = createDirectory(db);
  const mediaStore = createDbMediaStore(db);
  const media = createMediaService({ db, store: mediaStore, unusedTtlSeconds: config.mediaUnusedTtlSeconds });
  const outbound = createOutboundClient({ allowPrivate: config.unsafeAllowPrivateUrls, resolve });
  // A bounded pool (PROVIDER_CONNECTIONS, opened only when needed): sends beyond it wait in this
  // process for a connection, and the wait does not count against their response deadline (0061).
  const provider = createProviderClient({
    baseUrl: config.providerBaseUrl,
    apiVersion: config.providerApiVersion,
    timeoutMs: config.providerTimeoutMs,
    connectTimeoutMs: config.providerConnectTimeoutMs,
    connections: config.providerConnections,
    observe: providerObserver(metrics),
  });
  // Template sends are checked against the account's catalog at accept (decision 0068).
  const catalog = createTemplateCatalog({ db, sealer, provider });
  const sends = createSendService({
    db,
    maxSendAttempts: config.maxSendAttempts,
    media,
    catalog,
    metrics,
    batchDeadlineMs: config.dbConnectTimeoutMs + config.dbTransactionTimeoutMs + 1_000,
  });
  return { directory, mediaStore, media, sends, resolve, outbound, provider, catalog };
}

/** The services of the capabilities, over the platform's. */
function createCapabilities(
  config: Config,
  deps: { db: Db; log: Logger; metrics: Metrics; sealer: Sealer } & ReturnType<typeof createPlatform>,
) {
  const { db, log, metrics, sealer, directory, media, outbound, provider, resolve, catalog } = deps;
  const keys = createKeyService({ db, sealer, directory });
  const keyUsage = createKeyUsage({ db, onError: (err) => log.warn({ err }, 'could not record key use') });
  const messageQueries = createMessageQueries(db);
  const messageCancel = createMessageCancel({ db, queries: messageQueries });
  const broadcasts = createBroadcastService({ db, maxSendAttempts: config.maxSendAttempts, media, catalog, metrics });
  const senders = createSenderService({ db });
  const inboundFiles = createInboundFiles({ db, store: deps.mediaStore });
  const reads = createReadMarker({ db, sealer, provider, metrics, horizonMs: config.dispatchPacingHorizonMs });
  const conversations = createConversationService({ db, senders, messages: messageQueries });
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
  const team = createTeamService({ db, users });
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
  const messagingLimits = createMessagingLimits({ db });
  const accountList = createAccountList({ db, publicBaseUrl: config.publicBaseUrl });
  const inbound = createInboundService({ db, log, client: outbound, metrics });
  const receipts = createReceiptService({ db, sealer, appSecret: config.providerAppSecret, log, inbound, metrics });
  return {
    messagingLimits,
    keys,
    keyUsage,
    messageQueries,
    messageCancel,
    broadcasts,
    senders,
    conversations,
    inboundFiles,
    reads,
    settings,
    endpoints,
    templates,
    suppressions,
    templateCategories,
    users,
    team,
    sessions,
    audit,
    portalQueries,
    customers,
    accounts,
    customerQueries,
    usage,
    accountList,
    inbound,
    receipts,
    ...createPortalSignIn(config, { db, log, sealer }),
  };
}

/** Self-serve linking with the provider's Embedded Signup (decision 0076). */
function createSelfServeLinking(
  config: Config,
  deps: Pick<Parameters<typeof createEmbeddedSignup>[0], 'db' | 'provider' | 'accounts'>,
) {
  return createEmbeddedSignup({
    ...deps,
    settings: {
      appId: config.embeddedSignupAppId,
      configId: config.embeddedSignupConfigId,
      appSecret: config.providerAppSecret,
      sdkUrl: config.embeddedSignupSdkUrl,
      plans: config.embeddedSignupPlans,
    },
  });
}

/** Two-factor sign-in and password reset by email (decision 0051). */
function createPortalSignIn(config: Config, deps: { db: Db; log: Logger; sealer: Sealer }) {
  const { db, log, sealer } = deps;
  const twoFactor = createTwoFactorService({
    db,
    sealer,
    maxFailuresPerAccount: config.portalLoginMaxFailures,
    maxFailuresPerAddress: config.portalLoginMaxFailuresPerAddress,
  });
  const passwordResets = createPasswordResetService({
    db,
    log,
    publicBaseUrl: config.publicBaseUrl,
    mailer: createMailer(config),
    maxPerAddress: config.portalLoginMaxFailuresPerAddress,
  });
  return { twoFactor, passwordResets };
}

/** Embedded mode only: a key generated once and kept beside the data (PostgreSQL mode requires ENCRYPTION_KEY). */
function embeddedEncryptionKey(dataDir: string): Buffer {
  const file = path.join(dataDir, 'encryption.key');
  fs.mkdirSync(dataDir, { recursive: true });
  if (!fs.existsSync(file))
    fs.writeFileSync(file, crypto.randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
}
