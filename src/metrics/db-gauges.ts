// Gauges read from the database when Prometheus scrapes: queue depth and age, accounts by status,
// failing webhook endpoints, quota use of the customers nearest their limit, and the pool. The
// reads are shared by every gauge of one scrape and cached for a few seconds, so scrapes from
// several Prometheus servers (or a burst of them) cost one set of queries.
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { ACCOUNT_STATUSES } from '../shared/vocab.js';
import { type Metrics, scrapedGauge } from './metrics.js';
import {
  type AccountInError,
  QUEUE_STATES,
  type QueueRow,
  type QuotaRow,
  readAccountsInError,
  readAccountStatuses,
  readFailingEndpoints,
  readQueue,
  readTopQuota,
  readWebhookBacklog,
  type WebhookBacklog,
} from './snapshot-store.js';

export const SNAPSHOT_CACHE_MS = 5000;
/** Accounts in ERROR exported one series each (ChatGateAccountInError); beyond, only the count. */
const ACCOUNTS_IN_ERROR_SERIES = 1000;

type Snapshot = {
  queue: QueueRow[];
  accounts: Map<string, number>;
  inError: AccountInError[];
  failingEndpoints: number;
  webhookBacklog: WebhookBacklog;
  quota: QuotaRow[];
};

type DbGaugesDeps = {
  db: Pick<Db, 'query' | 'stats'>;
  log: Pick<Logger, 'warn'>;
  quotaTopN: number;
  cacheMs?: number;
};
type ReadSnapshot = () => Promise<Snapshot | null>;

export function registerDbGauges(metrics: Pick<Metrics, 'registry'>, deps: DbGaugesDeps): void {
  const snapshot = snapshotReader(deps);
  registerStateGauges(metrics, snapshot);
  registerWebhookGauges(metrics, snapshot);
  registerQuotaGauges(metrics, snapshot);
  registerPoolGauges(metrics, deps.db);
}

/** One read of every table the gauges show, shared by the gauges of a scrape and cached cacheMs. */
function snapshotReader(deps: DbGaugesDeps): ReadSnapshot {
  const { db } = deps;
  const cacheMs = deps.cacheMs ?? SNAPSHOT_CACHE_MS;
  let cached: { at: number; value: Promise<Snapshot | null> } | null = null;
  let last: Snapshot | null = null;

  async function read(): Promise<Snapshot | null> {
    try {
      last = {
        queue: await readQueue(db),
        accounts: await readAccountStatuses(db),
        inError: await readAccountsInError(db, ACCOUNTS_IN_ERROR_SERIES),
        failingEndpoints: await readFailingEndpoints(db),
        webhookBacklog: await readWebhookBacklog(db),
        quota: deps.quotaTopN > 0 ? await readTopQuota(db, deps.quotaTopN) : [],
      };
    } catch (err) {
      // The scrape still answers (process metrics, counters); these gauges keep their last values.
      deps.log.warn({ err }, 'metrics: reading the database failed');
    }
    return last;
  }
  return () => {
    if (!cached || Date.now() - cached.at >= cacheMs) cached = { at: Date.now(), value: read() };
    return cached.value;
  };
}

/** The queue, the accounts by status and in ERROR, the failing webhook endpoints. */
function registerStateGauges(metrics: Pick<Metrics, 'registry'>, snapshot: ReadSnapshot): void {
  scrapedGauge(
    metrics,
    { name: 'chatgate_queue_messages', help: 'Messages waiting for a worker by state', labelNames: ['state'] },
    async (g) => {
      const s = await snapshot();
      if (!s) return;
      for (const state of QUEUE_STATES) g.set({ state }, s.queue.find((r) => r.state === state)?.depth ?? 0);
    },
  );
  scrapedGauge(
    metrics,
    {
      name: 'chatgate_queue_oldest_due_age_seconds',
      help: 'How long the oldest message past its due time has waited, by state (0 when none)',
      labelNames: ['state'],
    },
    async (g) => {
      const s = await snapshot();
      if (!s) return;
      for (const state of QUEUE_STATES) g.set({ state }, s.queue.find((r) => r.state === state)?.oldestDueSeconds ?? 0);
    },
  );
  scrapedGauge(
    metrics,
    { name: 'chatgate_chat_accounts', help: 'Chat accounts by status', labelNames: ['status'] },
    async (g) => {
      const s = await snapshot();
      if (!s) return;
      for (const status of ACCOUNT_STATUSES) g.set({ status }, s.accounts.get(status) ?? 0);
    },
  );
  scrapedGauge(
    metrics,
    {
      name: 'chatgate_chat_account_in_error',
      help: 'One series (value 1) per chat account in ERROR, with its customer and the provider error code',
      labelNames: ['account_id', 'customer_id', 'code'],
    },
    async (g) => {
      const s = await snapshot();
      if (!s) return;
      g.reset(); // accounts reconnected since disappear
      for (const a of s.inError) g.set({ account_id: a.accountId, customer_id: a.customerId, code: a.code }, 1);
    },
  );
  scrapedGauge(
    metrics,
    {
      name: 'chatgate_webhook_endpoints_failing',
      help: 'Active webhook endpoints whose latest delivery attempt failed',
      labelNames: [],
    },
    async (g) => {
      const s = await snapshot();
      if (s) g.set(s.failingEndpoints);
    },
  );
}

/** The webhook deliveries the delivery workers have not caught up with. */
function registerWebhookGauges(metrics: Pick<Metrics, 'registry'>, snapshot: ReadSnapshot): void {
  scrapedGauge(
    metrics,
    {
      name: 'chatgate_webhook_backlog_deliveries',
      help: 'Webhook deliveries past their due time and not delivered yet (a retry counts once due again)',
      labelNames: [],
    },
    async (g) => {
      const s = await snapshot();
      if (s) g.set(s.webhookBacklog.due);
    },
  );
  scrapedGauge(
    metrics,
    {
      name: 'chatgate_webhook_backlog_oldest_due_age_seconds',
      help: 'How long the oldest webhook delivery past its due time has waited (0 when none): the delivery workers falling behind',
      labelNames: [],
    },
    async (g) => {
      const s = await snapshot();
      if (s) g.set(s.webhookBacklog.oldestDueSeconds);
    },
  );
}

/** Quota use of the customers nearest their limit. */
function registerQuotaGauges(metrics: Pick<Metrics, 'registry'>, snapshot: ReadSnapshot): void {
  const quotaGauge = (name: string, help: string, value: (r: QuotaRow) => number) =>
    scrapedGauge(metrics, { name, help, labelNames: ['customer_id'] }, async (g) => {
      const s = await snapshot();
      if (!s) return;
      g.reset(); // customers who left the top N disappear
      for (const r of s.quota) g.set({ customer_id: r.customerId }, value(r));
    });
  quotaGauge(
    'chatgate_quota_used_ratio',
    'Monthly quota used against the plan limit, for the METRICS_QUOTA_TOP_N customers nearest their limit',
    (r) => r.used / r.limit,
  );
  quotaGauge(
    'chatgate_quota_used_messages',
    'Messages counted against the monthly quota (top N customers)',
    (r) => r.used,
  );
  quotaGauge('chatgate_quota_limit_messages', "The plan's monthly message limit (top N customers)", (r) => r.limit);
}

/** The database pool of this process (read live, not from the snapshot). */
function registerPoolGauges(metrics: Pick<Metrics, 'registry'>, db: Pick<Db, 'stats'>): void {
  const pool = (name: string, help: string, value: (s: ReturnType<Db['stats']>) => number) =>
    scrapedGauge(metrics, { name, help, labelNames: [] }, (g) => g.set(value(db.stats())));
  pool('chatgate_db_pool_size', 'Database connections this process may open (1 for embedded PGlite)', (s) => s.size);
  pool(
    'chatgate_db_pool_in_use',
    'Database statements and transactions in flight, up to the pool size',
    (s) => s.inUse,
  );
  pool(
    'chatgate_db_pool_waiting',
    'Database statements and transactions in flight beyond the pool size (queued or pipelined by the driver)',
    (s) => s.waiting,
  );
}
