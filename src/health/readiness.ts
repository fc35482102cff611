// Readiness: can this process do its work? Only what it owns counts: the database answers, every
// migration this code knows is applied, no database fault was seen lately (a full disk or a
// read-only database answers the probe's SELECT but refuses every write: database-faults.ts), and
// the write path moves (a batch of accepted sends in flight, or a dispatcher wanting a pass, for
// longer than STALL_BOUND_MS: a connection that never answers stops everything behind it, and a
// SELECT on a fresh connection would not see it). The provider being unreachable is not a reason
// (a restart would not help; sends retry on their own), nor is a webhook receiver being down.
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import type { DatabaseFaultReason } from '../db/db-errors.js';
import { readMigrations } from '../db/migrate.js';
import type { DatabaseFaults } from './database-faults.js';

/** A part of the write path: `accept` (POST /messages' batches), `dispatcher` (its passes and outcome writes). */
export type WritePathPart = 'accept' | 'dispatcher';
export type WritePathStall = { part: WritePathPart; stalledMs: number };

/** Longer than any healthy batch or pass (milliseconds), shorter than a client's patience. */
export const STALL_BOUND_MS = 10_000;

export type NotReadyReason =
  | { check: 'database'; error: string }
  | { check: 'migrations'; pending: string[] }
  | { check: 'database_fault'; reason: DatabaseFaultReason; count: number; lastSeenSecondsAgo: number }
  | { check: 'write_path'; part: WritePathPart; stalledSeconds: number };

export type Readiness = { ready: true } | { ready: false; reasons: NotReadyReason[] };

const UNDEFINED_TABLE = '42P01';

export function createReadiness(deps: {
  db: Pick<Db, 'query'>;
  log: Pick<Logger, 'warn' | 'info'>;
  /** Migration file names this code expects applied (default: the files shipped with it). */
  migrations?: string[];
  /** A database slower than this to answer counts as unavailable (a probe must not hang). */
  timeoutMs?: number;
  /** What /readyz shows beside the status, ready or not (e.g. the provider API version in use). */
  details?: () => Record<string, unknown>;
  /** Database faults seen lately by this process (requests and workers). */
  faults?: Pick<DatabaseFaults, 'recent'>;
  /** How long each part of the write path this process runs has been stuck (0: moving or idle). */
  stalls?: () => WritePathStall[];
  stallBoundMs?: number;
}) {
  const expected = deps.migrations ?? readMigrations().map((m) => m.name);
  const timeoutMs = deps.timeoutMs ?? 2000;
  const stallBoundMs = deps.stallBoundMs ?? STALL_BOUND_MS;
  let wasReady = true;

  /** Applied migration names; null when schema_migrations does not exist yet. */
  async function applied(): Promise<Set<string> | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const rows = await Promise.race([deps.db.query<{ name: string }>('SELECT name FROM schema_migrations'), timeout]);
      return new Set(rows.map((r) => r.name));
    } catch (err) {
      if ((err as { code?: string }).code === UNDEFINED_TABLE) return null;
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Faults seen lately and parts of the write path stuck past the bound (read before the SELECT: it may add a fault). */
  function writeTrouble(): NotReadyReason[] {
    const faults: NotReadyReason[] = (deps.faults?.recent() ?? []).map((f) => ({
      check: 'database_fault',
      reason: f.reason,
      count: f.count,
      lastSeenSecondsAgo: Math.floor(f.lastSeenMsAgo / 1000),
    }));
    const stalls: NotReadyReason[] = (deps.stalls?.() ?? [])
      .filter((s) => s.stalledMs > stallBoundMs)
      .map((s) => ({ check: 'write_path', part: s.part, stalledSeconds: Math.floor(s.stalledMs / 1000) }));
    return [...stalls, ...faults];
  }

  async function evaluate(): Promise<{ result: Readiness; detail?: unknown }> {
    const trouble = writeTrouble();
    let names: Set<string> | null;
    try {
      names = await applied();
    } catch (err) {
      const error = /no answer within/.test(String(err)) ? `no answer within ${timeoutMs} ms` : 'unreachable';
      return { result: { ready: false, reasons: [{ check: 'database', error }, ...trouble] }, detail: err };
    }
    const pending = expected.filter((n) => !names?.has(n));
    const reasons: NotReadyReason[] = pending.length > 0 ? [{ check: 'migrations', pending }, ...trouble] : trouble;
    return { result: reasons.length > 0 ? { ready: false, reasons } : { ready: true } };
  }

  return {
    /** What /readyz shows beside the status (nothing a probe acts on: information for an operator). */
    details(): Record<string, unknown> {
      return deps.details?.() ?? {};
    },
    /** Logs when readiness changes (not on every probe): the reasons, and the database error itself. */
    async check(): Promise<Readiness> {
      const { result, detail } = await evaluate();
      if (wasReady && !result.ready) deps.log.warn({ reasons: result.reasons, err: detail }, 'not ready');
      if (!wasReady && result.ready) deps.log.info('ready again');
      wasReady = result.ready;
      return result;
    },
  };
}

export type ReadinessCheck = ReturnType<typeof createReadiness>;
