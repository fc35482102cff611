// Readiness: can this process do its work? Only what it owns counts: the database answers and
// every migration this code knows is applied. The provider being unreachable is not a reason
// (a restart would not help; sends retry on their own), nor is a webhook receiver being down.
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { readMigrations } from '../db/migrate.js';

export type NotReadyReason = { check: 'database'; error: string } | { check: 'migrations'; pending: string[] };

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
}) {
  const expected = deps.migrations ?? readMigrations().map((m) => m.name);
  const timeoutMs = deps.timeoutMs ?? 2000;
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

  async function evaluate(): Promise<{ result: Readiness; detail?: unknown }> {
    let names: Set<string> | null;
    try {
      names = await applied();
    } catch (err) {
      const error = /no answer within/.test(String(err)) ? `no answer within ${timeoutMs} ms` : 'unreachable';
      return { result: { ready: false, reasons: [{ check: 'database', error }] }, detail: err };
    }
    const pending = expected.filter((n) => !names?.has(n));
    if (pending.length > 0) return { result: { ready: false, reasons: [{ check: 'migrations', pending }] } };
    return { result: { ready: true } };
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
