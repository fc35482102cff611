// Configuration is read from the environment once, validated, and passed in.
// Nothing else in src/ reads process.env.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { type InboundMediaSettings, readInboundMediaSettings } from './config-inbound-media.js';
import { type MailSettings, readMailSettings } from './config-mail.js';
import { createReaders, type Env, type Readers } from './config-readers.js';
import { readSignupSettings, type SignupSettings } from './config-signup.js';
import { apiVersionProblem, DEFAULT_API_VERSION } from './provider/api-versions.js';
import { DEFAULT_BLOCKED_MARKETS, parseMarkets } from './shared/markets.js';

export type Config = {
  port: number;
  host: string;
  /** `serve --role worker` only: port of /healthz, /readyz and /metrics (0: any free port); null: none. */
  workerStatusPort: number | null;
  databaseUrl: string | null;
  dataDir: string;
  dbPoolSize: number;
  /** PostgreSQL: a statement's bound (the server's statement_timeout; the client gives up 0.5 s later). */
  dbStatementTimeoutMs: number;
  /** PostgreSQL: a whole transaction's bound (and the server's idle_in_transaction_session_timeout). */
  dbTransactionTimeoutMs: number;
  /** PostgreSQL: getting a connection, from the pool or a new one. */
  dbConnectTimeoutMs: number;
  /** Embedded database only: PostgreSQL's shared_buffers inside PGlite, in MB (its page cache, in this process's memory). */
  embeddedSharedBuffersMb: number;
  /** Embedded database only: PGlite runs in a worker thread of its own, off the thread that serves HTTP (0058). */
  embeddedDbThread: boolean;
  adminToken: string | null;
  /** Wrong operator tokens per client address within a minute before it is answered 429 for the rest of it. */
  adminMaxFailures: number;
  publicBaseUrl: string;
  providerBaseUrl: string;
  providerApiVersion: string;
  providerAppSecret: string | null;
  providerTimeoutMs: number;
  /** PROVIDER_CONNECT_TIMEOUT_MS: TCP and TLS connect to the provider; a send that fails there was never sent (decision 0061). */
  providerConnectTimeoutMs: number;
  /** PROVIDER_CONNECTIONS: connections to the provider per origin; more requests wait in this process. */
  providerConnections: number;
  /** SEND_CONFIRM_WAIT_MS: how long a send that may have reached the provider waits for its receipt before failing (decision 0061). */
  sendConfirmWaitMs: number;
  providerVerifyToken: string | null;
  unsafeAllowPrivateUrls: boolean;
  retryTimeScale: number;
  /** The first spacing of a recipient after the pair rate limit (131056, doubled on repeats); the pause after 131057 (0042). */
  pairRateSpacingMs: number;
  maintenancePauseMs: number;
  /** MARKETING_BLOCKED_MARKETS: regions (US) and calling codes (+44) where marketing templates fail before the provider. */
  marketingBlockedMarkets: string[];
  purgeIntervalSeconds: number;
  /** 32-byte key (base64) for secrets at rest; null means "generate one under DATA_DIR" (embedded mode only). */
  encryptionKey: Buffer | null;
  /** During a key rotation only: the key being replaced, still accepted for opening until rekey finished. */
  encryptionKeyPrevious: Buffer | null;
  logLevel: string;
  /** `json` (one JSON object a line, for collectors) or `pretty` (readable lines, for development). */
  logFormat: 'json' | 'pretty';
  maxSendAttempts: number;
  workerBatchSize: number;
  workerLeaseSeconds: number;
  workerPollMs: number;
  /** WORKER_ACTIVITY_LOG_MS: the period of each dispatcher's activity line (sent, failed, retried, backlog); 0: none. */
  workerActivityLogMs: number;
  workerMaxInFlight: number;
  /** The longest a dispatcher books pacing slots ahead (never past what its lease allows). */
  pacingHorizonMs: number;
  /** Media steps (fetch, upload) at once per worker process: each may hold a file of up to 20 MB. */
  maxMediaSteps: number;
  /** How often each worker process applies receipts parked in a race with their send's commit (a safety net). */
  parkedSweepMs: number;
  /** The webhook deliverer: its claim's lease, concurrent POSTs per endpoint, POSTs in flight per process. */
  webhookLeaseSeconds: number;
  webhookPerEndpointConcurrency: number;
  webhookMaxInFlight: number;
  sandboxStepMs: number;
  /** Re-verifying an account marked after a rejected token: first probe, longest gap (times RETRY_TIME_SCALE). */
  accountProbeFirstDelaySeconds: number;
  accountProbeMaxDelaySeconds: number;
  /** How long an uploaded file may wait unused before it expires (the spec's 1 hour). */
  mediaUnusedTtlSeconds: number;
  bodyLimitBytes: number;
  /** Deadline for receiving a whole request, head and body (Node's requestTimeout): 408 beyond. */
  bodyReadTimeoutMs: number;
  /** A request's head (request line and headers) must arrive within this (Node's headersTimeout): 408 beyond. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (Node's keepAliveTimeout). */
  keepAliveTimeoutMs: number;
  /** Open client connections per API process (Node's server.maxConnections); more are closed at once. */
  maxConnections: number;
  /** Open connections from one client address (an IPv6 /64) per API process; more are closed at once; 0: no limit. */
  maxConnectionsPerAddress: number;
  shutdownTimeoutMs: number;
  /** Portal sessions end after this long without a request, and at the absolute limit in any case. */
  portalSessionIdleMinutes: number;
  portalSessionAbsoluteHours: number;
  /** How long an invitation (or password reset) link stays valid. */
  portalInvitationHours: number;
  /** Failed logins per account within 15 minutes before logins are refused; per client address, 4 times this. */
  portalLoginMaxFailures: number;
  /**
   * Which proxies to believe about the client's address (X-Forwarded-For): false (none, the default), a hop count,
   * or addresses/CIDRs (and proxy-addr's `loopback`, `linklocal`, `uniquelocal`); true: one hop, warned at start-up.
   */
  trustProxy: boolean | number | string[];
  /** Bearer token required by GET /metrics; null leaves /metrics open (keep it off the public network). */
  metricsToken: string | null;
  /** Customers nearest their monthly limit exported with their own quota series; 0 exports none. */
  metricsQuotaTopN: number;
  /** Distinct account or endpoint ids kept as label values per process; the rest count as "other". */
  metricsMaxIdLabels: number;
} & DerivedSettings &
  InboundMediaSettings &
  MailSettings &
  SignupSettings;

/** Settings computed from the others in loadConfig (none is read from the environment). */
export type DerivedSettings = {
  /** PACING_HORIZON_MS, capped so a booked send fires, and its request ends, inside its claim's lease (1 s to spare). */
  dispatchPacingHorizonMs: number;
  /**
   * How long after its booking a send may still get its provider connection: the lease less
   * PROVIDER_TIMEOUT_MS (its answer's deadline from then) and 0.5 s to write its outcome (decision 0061).
   */
  dispatchSendStartRoomMs: number;
  /** How long a media URL may take to answer, redirects included: 10 s, less when the lease leaves no room for the upload after it (at least 1 s). */
  mediaFetchTimeoutMs: number;
  /** The prober's claim on an account: one provider request, and 5 s to record its answer. */
  accountProbeLeaseSeconds: number;
  /** The inbound media fetcher's claim on a file: two provider requests, and 10 s to store it. */
  inboundMediaLeaseSeconds: number;
  /** ACCOUNT_PROBE_FIRST_DELAY_SECONDS in ms, times RETRY_TIME_SCALE: when the dispatcher schedules a marked account's first probe. */
  accountProbeFirstDelayScaledMs: number;
  /** Failed portal logins per client address within 15 minutes: 4 times PORTAL_LOGIN_MAX_FAILURES. */
  portalLoginMaxFailuresPerAddress: number;
  /** Cookie security (Secure, __Host-, HSTS) follows PUBLIC_BASE_URL only: an https one gets them. */
  portalSecureCookies: boolean;
  /** On shutdown, requests in flight may finish for this long (5 s, at most a quarter of SHUTDOWN_TIMEOUT_MS). */
  shutdownRequestGraceMs: number;
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export type { Env };

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The process's environment, after loading `.env` from the working directory into it (if there is one). */
export function readEnvironment(): Env {
  if (fs.existsSync('.env')) process.loadEnvFile('.env');
  return process.env;
}

export type AdminCliConfig = { baseUrl: string; adminToken: string | null };

/** Settings of `chatgate admin`: where the operator API is, and its token. */
export function loadAdminCliConfig(env: Env): AdminCliConfig {
  const port = env.PORT ?? '3000';
  return {
    baseUrl: (env.CHATGATE_URL ?? `http://127.0.0.1:${port}`).replace(/\/+$/, ''),
    adminToken: env.ADMIN_TOKEN ?? null,
  };
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** TRUST_PROXY: unset/false, true, a hop count (1-10), or a comma-separated list of addresses/CIDRs. */
function trustProxyOf(raw: string | null, problems: string[]): boolean | number | string[] {
  if (raw === null || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops >= 1 && hops <= 10) return hops;
  } else {
    const items = raw.split(',').map((x) => x.trim());
    const ok = (x: string) => {
      if (PROXY_NAMES.has(x)) return true;
      const [address, prefix, extra] = x.split('/');
      return (
        extra === undefined &&
        net.isIP(address ?? '') !== 0 &&
        (prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (net.isIPv4(address!) ? 32 : 128)))
      );
    };
    if (items.every(ok)) return items;
  }
  problems.push(
    `TRUST_PROXY must be false, true, a hop count from 1 to 10, or addresses/CIDRs separated by commas (got "${raw}")`,
  );
  return false;
}

/** localhost, 127.0.0.0/8 or ::1 (a URL's hostname, IPv6 in brackets). */
function isLoopbackHost(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || (net.isIPv4(bare) && bare.startsWith('127.'));
}

/** Parses and validates every setting; collects all problems so one start-up names them all. */
export function loadConfig(env: Env): Config {
  const problems: string[] = [];
  const r = createReaders(env, problems);
  const config: Omit<Config, keyof DerivedSettings> = {
    ...readServerSettings(r, problems),
    ...readWorkSettings(r, problems),
    ...readMailSettings(r, problems),
    ...readSignupSettings(r, problems),
  };
  checkTogether(config, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...config, ...deriveSettings(config) };
}

/** Where the service listens and what it connects to, its secrets, logs and the provider. */
function readServerSettings(r: Readers, problems: string[]) {
  const { str, int, bool, num, url } = r;
  const port = int('PORT', 3000, 0, 65535);
  const host = str('HOST') ?? '127.0.0.1';
  const databaseUrl = str('DATABASE_URL');
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const adminToken = str('ADMIN_TOKEN');
  if (adminToken !== null && adminToken.length < 16) {
    problems.push('ADMIN_TOKEN must be at least 16 characters long');
  }
  let encryptionKey: Buffer | null = null;
  const rawKey = str('ENCRYPTION_KEY');
  if (rawKey !== null) {
    const decoded = Buffer.from(rawKey, 'base64');
    if (decoded.length !== 32)
      problems.push('ENCRYPTION_KEY must be 32 bytes encoded in base64 (openssl rand -base64 32)');
    else encryptionKey = decoded;
  } else if (databaseUrl !== null) {
    problems.push(
      'ENCRYPTION_KEY is required with DATABASE_URL (every process must share it): openssl rand -base64 32',
    );
  }
  let encryptionKeyPrevious: Buffer | null = null;
  const rawPrevious = str('ENCRYPTION_KEY_PREVIOUS');
  if (rawPrevious !== null) {
    const decoded = Buffer.from(rawPrevious, 'base64');
    if (decoded.length !== 32) problems.push('ENCRYPTION_KEY_PREVIOUS must be 32 bytes encoded in base64');
    else if (rawKey === null) problems.push('ENCRYPTION_KEY_PREVIOUS needs ENCRYPTION_KEY (the new key) set too');
    else if (encryptionKey?.equals(decoded)) problems.push('ENCRYPTION_KEY_PREVIOUS must differ from ENCRYPTION_KEY');
    else encryptionKeyPrevious = decoded;
  }
  const metricsToken = str('METRICS_TOKEN');
  if (metricsToken !== null && metricsToken.length < 16)
    problems.push('METRICS_TOKEN must be at least 16 characters long');
  const logLevel = str('LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const logFormat = str('LOG_FORMAT') ?? 'json';
  if (logFormat !== 'json' && logFormat !== 'pretty') problems.push('LOG_FORMAT must be json or pretty');

  // `none` for no market; unset: the markets the provider documents (shared/markets.ts).
  const blockedMarkets = parseMarkets(str('MARKETING_BLOCKED_MARKETS') ?? DEFAULT_BLOCKED_MARKETS);
  if (blockedMarkets.problem) problems.push(`MARKETING_BLOCKED_MARKETS: ${blockedMarkets.problem}`);
  return {
    port,
    host,
    workerStatusPort: str('WORKER_STATUS_PORT') === null ? null : int('WORKER_STATUS_PORT', 0, 0, 65535),
    databaseUrl,
    dataDir: path.resolve(str('DATA_DIR') ?? './data'),
    dbPoolSize: int('DB_POOL_SIZE', 20, 2, 500),
    dbStatementTimeoutMs: int('DATABASE_STATEMENT_TIMEOUT_MS', 10_000, 100, 600_000),
    dbTransactionTimeoutMs: int('DATABASE_TRANSACTION_TIMEOUT_MS', 15_000, 100, 600_000),
    dbConnectTimeoutMs: int('DATABASE_CONNECT_TIMEOUT_MS', 5_000, 100, 600_000),
    embeddedSharedBuffersMb: int('EMBEDDED_SHARED_BUFFERS_MB', 32, 1, 4096),
    // On unless set false: measured faster and cheaper per message than PGlite on the main thread (0058).
    embeddedDbThread: str('EMBEDDED_DB_THREAD') === null || bool('EMBEDDED_DB_THREAD'),
    adminToken,
    adminMaxFailures: int('ADMIN_MAX_FAILURES', 10, 1, 100_000),
    publicBaseUrl: url('PUBLIC_BASE_URL', `http://${host.includes(':') ? `[${host}]` : host}:${port}`) ?? '',
    providerBaseUrl: url('PROVIDER_BASE_URL', 'https://graph.facebook.com') ?? '',
    providerApiVersion: str('PROVIDER_API_VERSION') ?? DEFAULT_API_VERSION,
    providerAppSecret: str('PROVIDER_APP_SECRET'),
    providerTimeoutMs: int('PROVIDER_TIMEOUT_MS', 15000, 100, 120000),
    providerConnectTimeoutMs: int('PROVIDER_CONNECT_TIMEOUT_MS', 5000, 100, 60000),
    providerConnections: int('PROVIDER_CONNECTIONS', 512, 1, 20000),
    sendConfirmWaitMs: int('SEND_CONFIRM_WAIT_MS', 600_000, 10, 7 * 86400_000),
    providerVerifyToken: str('PROVIDER_VERIFY_TOKEN'),
    unsafeAllowPrivateUrls: bool('UNSAFE_ALLOW_PRIVATE_URLS'),
    retryTimeScale: num('RETRY_TIME_SCALE', 1, 0, 1000),
    pairRateSpacingMs: int('PAIR_RATE_SPACING_MS', 6000, 10, 600_000),
    maintenancePauseMs: int('PROVIDER_MAINTENANCE_PAUSE_MS', 60_000, 10, 600_000),
    marketingBlockedMarkets: blockedMarkets.markets,
    purgeIntervalSeconds: int('PURGE_INTERVAL_SECONDS', 3 * 3600, 1, 30 * 86400),
    encryptionKey,
    encryptionKeyPrevious,
    metricsToken,
    logLevel,
    logFormat: (logFormat === 'pretty' ? 'pretty' : 'json') as Config['logFormat'],
  };
}

/** The workers, limits, portal and metrics. */
function readWorkSettings(r: Readers, problems: string[]) {
  const { str, int } = r;
  return {
    maxSendAttempts: int('MAX_SEND_ATTEMPTS', 5, 1, 50),
    workerBatchSize: int('WORKER_BATCH_SIZE', 200, 1, 5000),
    workerLeaseSeconds: int('WORKER_LEASE_SECONDS', 30, 1, 3600),
    workerPollMs: int('WORKER_POLL_MS', 1000, 10, 60000),
    workerActivityLogMs: int('WORKER_ACTIVITY_LOG_MS', 60_000, 0, 86_400_000),
    workerMaxInFlight: int('WORKER_MAX_IN_FLIGHT', 1000, 1, 20000),
    pacingHorizonMs: int('PACING_HORIZON_MS', 10_000, 100, 600_000),
    maxMediaSteps: int('MAX_MEDIA_STEPS', 4, 1, 256),
    parkedSweepMs: int('PARKED_SWEEP_MS', 5000, 100, 600_000),
    // At least a delivery's 10 s timeout and the time to record its attempt.
    webhookLeaseSeconds: int('WEBHOOK_LEASE_SECONDS', 60, 12, 3600),
    webhookPerEndpointConcurrency: int('WEBHOOK_PER_ENDPOINT_CONCURRENCY', 16, 1, 1000),
    webhookMaxInFlight: int('WEBHOOK_MAX_IN_FLIGHT', 1000, 1, 20000),
    sandboxStepMs: int('SANDBOX_STEP_MS', 1000, 0, 60000),
    accountProbeFirstDelaySeconds: int('ACCOUNT_PROBE_FIRST_DELAY_SECONDS', 60, 1, 86400),
    accountProbeMaxDelaySeconds: int('ACCOUNT_PROBE_MAX_DELAY_SECONDS', 1800, 1, 7 * 86400),
    mediaUnusedTtlSeconds: int('MEDIA_UNUSED_TTL_SECONDS', 3600, 1, 86400),
    ...readInboundMediaSettings(r, problems),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    // 20 MB in 2 minutes is about 1.4 Mbit/s: a slow mobile upload still fits.
    bodyReadTimeoutMs: int('BODY_READ_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    headersTimeoutMs: int('HEADERS_TIMEOUT_MS', 10_000, 500, 120_000),
    keepAliveTimeoutMs: int('KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
    maxConnections: int('MAX_CONNECTIONS', 1024, 1, 1_000_000),
    // A quarter of MAX_CONNECTIONS' default: one address never holds them all (decision 0062).
    maxConnectionsPerAddress: int('MAX_CONNECTIONS_PER_ADDRESS', 512, 0, 1_000_000),
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 20000, 0, 600000),
    portalSessionIdleMinutes: int('PORTAL_SESSION_IDLE_MINUTES', 30, 1, 1440),
    portalSessionAbsoluteHours: int('PORTAL_SESSION_ABSOLUTE_HOURS', 12, 1, 720),
    portalInvitationHours: int('PORTAL_INVITATION_HOURS', 72, 1, 720),
    portalLoginMaxFailures: int('PORTAL_LOGIN_MAX_FAILURES', 5, 1, 1000),
    trustProxy: trustProxyOf(str('TRUST_PROXY'), problems),
    metricsQuotaTopN: int('METRICS_QUOTA_TOP_N', 10, 0, 1000),
    metricsMaxIdLabels: int('METRICS_MAX_ID_LABELS', 500, 1, 100_000),
  };
}

/** The rules between settings. */
function checkTogether(config: Omit<Config, keyof DerivedSettings>, problems: string[]): void {
  if (!/^v\d+\.\d+$/.test(config.providerApiVersion)) problems.push('PROVIDER_API_VERSION must look like v23.0');
  else {
    const versionProblem = apiVersionProblem('PROVIDER_API_VERSION', config.providerApiVersion);
    if (versionProblem) problems.push(versionProblem);
  }
  if (config.workerLeaseSeconds * 1000 < config.providerTimeoutMs + 2000) {
    problems.push(
      'WORKER_LEASE_SECONDS must exceed PROVIDER_TIMEOUT_MS by at least 2 seconds (a claimed send must finish inside its lease)',
    );
  }
  // Access tokens travel to the provider in every request: in the clear only to this machine (the
  // emulator on loopback) or when UNSAFE_ALLOW_PRIVATE_URLS says so.
  if (
    config.providerBaseUrl.startsWith('http:') &&
    !config.unsafeAllowPrivateUrls &&
    !isLoopbackHost(new URL(config.providerBaseUrl).hostname)
  ) {
    problems.push(
      'PROVIDER_BASE_URL must use https (it carries access tokens); plain http only to a loopback address or with UNSAFE_ALLOW_PRIVATE_URLS=true',
    );
  }
  if (config.accountProbeMaxDelaySeconds < config.accountProbeFirstDelaySeconds) {
    problems.push('ACCOUNT_PROBE_MAX_DELAY_SECONDS must be at least ACCOUNT_PROBE_FIRST_DELAY_SECONDS');
  }
}

/** The settings computed from the others (see DerivedSettings). */
function deriveSettings(c: Omit<Config, keyof DerivedSettings>): DerivedSettings {
  const leaseMs = c.workerLeaseSeconds * 1000;
  return {
    dispatchPacingHorizonMs: Math.min(c.pacingHorizonMs, leaseMs - c.providerTimeoutMs - 1000),
    dispatchSendStartRoomMs: leaseMs - c.providerTimeoutMs - 500,
    mediaFetchTimeoutMs: Math.max(1000, Math.min(10_000, leaseMs - c.providerTimeoutMs - 2000)),
    accountProbeLeaseSeconds: Math.ceil(c.providerTimeoutMs / 1000) + 5,
    inboundMediaLeaseSeconds: Math.ceil((2 * c.providerTimeoutMs) / 1000) + 10,
    accountProbeFirstDelayScaledMs: c.accountProbeFirstDelaySeconds * 1000 * c.retryTimeScale,
    portalLoginMaxFailuresPerAddress: c.portalLoginMaxFailures * 4,
    portalSecureCookies: c.publicBaseUrl.startsWith('https:'),
    shutdownRequestGraceMs: Math.min(5000, c.shutdownTimeoutMs / 4),
  };
}

export type EmulatorConfig = {
  port: number;
  host: string;
  callbackUrl: string | null;
  appSecret: string | null;
  latencyMs: number;
  logLevel: string;
};

/** Settings of `chatgate emulator`. */
export function loadEmulatorConfig(env: Env): EmulatorConfig {
  const problems: string[] = [];
  const port = Number(env.EMULATOR_PORT ?? '4010');
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    problems.push('EMULATOR_PORT must be a whole number from 0 to 65535');
  const latencyMs = Number(env.EMULATOR_LATENCY_MS ?? '0');
  if (!Number.isFinite(latencyMs) || latencyMs < 0 || latencyMs > 60000)
    problems.push('EMULATOR_LATENCY_MS must be from 0 to 60000');
  const callbackUrl = env.EMULATOR_CALLBACK_URL?.trim() || null;
  if (callbackUrl !== null && !/^https?:\/\//.test(callbackUrl))
    problems.push('EMULATOR_CALLBACK_URL must be an http(s) URL');
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    port,
    host: env.EMULATOR_HOST?.trim() || '127.0.0.1',
    callbackUrl,
    appSecret: env.PROVIDER_APP_SECRET?.trim() || null,
    latencyMs,
    logLevel: env.LOG_LEVEL?.trim() || 'warn',
  };
}
