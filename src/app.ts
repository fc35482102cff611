// The composition root: builds every service by hand (app-services.ts) and wires the roles of this
// process: the API's server (app-server.ts) and the workers (app-workers.ts).
import pino, { type DestinationStream, type Logger } from 'pino';

import { createApiServer } from './app-server.js';
import { createServices, type Services } from './app-services.js';
import { createWorkers } from './app-workers.js';
import type { Config } from './config.js';
import type { Db } from './db/db.js';
import { migrate } from './db/migrate.js';
import { openDb } from './db/open-db.js';
import { createDatabaseFaults, type DatabaseFaults, watchDb } from './health/database-faults.js';
import { createReadiness, type WritePathStall } from './health/readiness.js';
import { closeServer } from './http/close-server.js';
import type { Server } from './http/server.js';
import { createStatusServer } from './http/status-server.js';
import type { Metrics } from './metrics/metrics.js';
import { registerReadinessGauge } from './metrics/readiness-gauge.js';
import { registerWritePathGauge } from './metrics/write-path-gauge.js';
import type { Resolve } from './outbound/outbound-client.js';
import { apiVersionSummary, apiVersionWarning } from './provider/api-versions.js';
import { CENSOR, redactSecrets } from './shared/log-redact.js';
import { prettyStream } from './shared/pretty-log.js';

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
    // Request headers by path; secret fields one level down in any logged object by the
    // formatters (log-redact.ts: a path starting with `*` costs its redactor on every value).
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization'], censor: CENSOR },
    formatters: { log: redactSecrets },
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
  const opened = opts.db ?? (await openDb(config, { log }));
  const applied = await migrate(opened);
  if (applied.length > 0) log.info({ applied }, 'migrations applied');
  warnAboutSettings(config, log);
  // Every database fault of this process (requests, pages, workers) is counted, logged once per
  // period and seen by /readyz: the seam reports them all (health/database-faults.ts).
  let countFault: (reason: string) => void = () => {};
  const faults = createDatabaseFaults({ log, count: (reason) => countFault(reason) });
  const db = watchDb(opened, faults);
  const s = await createServices(config, { db, log, resolve: opts.resolve });
  countFault = (reason) => s.metrics.databaseFaults.inc({ reason });

  const workers = role === 'api' ? null : createWorkers(config, { db, log }, s);
  const readiness = createHealth(config, { db, log, faults, role }, s, workers?.dispatcher ?? null);
  const statusServer =
    role === 'worker' && config.workerStatusPort !== null
      ? createStatusServer({ log, readiness, metrics: s.metrics, metricsToken: config.metricsToken })
      : null;
  const server =
    role !== 'worker'
      ? createApiServer(config, { db, log, readiness, faults, checkResponses: opts.checkResponses }, s)
      : null;

  let stopListening: (() => Promise<void>) | null = null;
  let stopped = false;

  return {
    db,
    log,
    metrics: s.metrics,
    server,
    async start() {
      stopListening = await s.directory.start();
      for (const w of workers?.all ?? []) await w.start();
      if (statusServer) {
        const address = await statusServer.listen({ port: config.workerStatusPort ?? 0, host: config.host });
        log.info({ address, role, database: db.kind }, 'worker status listening');
        return address;
      }
      if (!server) return null;
      const address = await server.listen({ port: config.port, host: config.host });
      log.info(
        { address, role, database: db.kind, docs: `${address}/docs`, portal: `${address}/portal` },
        'chatgate listening',
      );
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
          await s.sends.drain();
          await s.keyUsage.drain();
        })(),
        ...(workers?.all ?? []).map((w) => w.stop()),
      ]);
      await stopListening?.();
      await s.provider.close();
      await s.outbound.close();
      if (!opts.db) await opened.close();
    },
  };
}

/**
 * Readiness over the database, the faults this process met and the parts of the write path it
 * runs (accept: the API's batches; dispatcher: the worker's), which the stall gauge shows too.
 */
function createHealth(
  config: Config,
  deps: { db: Db; log: Logger; faults: DatabaseFaults; role: Role },
  s: Services,
  dispatcher: { stalledMs(): number } | null,
) {
  const stalls = (): WritePathStall[] => [
    ...(deps.role !== 'worker' ? [{ part: 'accept' as const, stalledMs: s.sends.oldestBatchMs() }] : []),
    ...(dispatcher ? [{ part: 'dispatcher' as const, stalledMs: dispatcher.stalledMs() }] : []),
  ];
  registerWritePathGauge(s.metrics, stalls);
  const readiness = createReadiness({
    db: deps.db,
    log: deps.log,
    details: () => ({ provider: apiVersionSummary(config.providerApiVersion) }),
    faults: deps.faults,
    stalls,
  });
  registerReadinessGauge(s.metrics, async () => (await readiness.check()).ready);
  return readiness;
}

/** Settings that start the service but deserve a line in its log. */
function warnAboutSettings(config: Config, log: Logger): void {
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
}
