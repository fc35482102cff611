// The account prober: an account marked after a rejected token is re-verified by itself. Each due
// probe reads the account's phone number with its token; accepted → CONNECTED again (caches
// invalidated, so sends flow at once), else the next probe backs off (first delay, doubled each
// time, capped). Every worker process runs the loop; a claim lets one process probe an account.
import type { Logger } from 'pino';

import type { Db, Queryable } from '../db/db.js';
import type { ProviderClient } from '../provider/cloud-api.js';
import { backoffDelayMs, doublingScheduleMs } from '../shared/backoff.js';
import type { Sealer } from '../shared/crypto.js';
import { createWorkerLoop } from '../shared/worker-loop.js';
import { judgeProbe, type ProbeVerdict } from './account-probe-policy.js';
import { claimDueProbes, type DueProbe, recordProbeAccepted, recordProbeFailed } from './account-store.js';

export type AccountProberOptions = {
  pollMs: number;
  /** Unscaled. The mark arms the first probe after it (markAccountError); later gaps double it. */
  firstDelayMs: number;
  /** Longest delay between probes (unscaled). */
  maxDelayMs: number;
  retryTimeScale: number;
  /** How long a claimed probe is this process's: longer than a provider request. */
  leaseSeconds: number;
};

/** Probes at once in one process: each is one short GET, and marked accounts are few. */
const BATCH = 20;

export function createAccountProber(deps: {
  db: Db;
  log: Logger;
  sealer: Sealer;
  provider: Pick<ProviderClient, 'readPhoneNumber'>;
  invalidateCustomer: (tx: Queryable, customerId: string) => Promise<void>;
  options: AccountProberOptions;
}) {
  const { db, log, options } = deps;
  const schedule = doublingScheduleMs(options.firstDelayMs, options.maxDelayMs);

  async function probe(p: DueProbe): Promise<void> {
    let verdict: ProbeVerdict = 'inconclusive';
    let detail: string | null = 'the account has no usable phone number id or token';
    if (p.phoneNumberId && p.accessToken) {
      const outcome = await deps.provider.readPhoneNumber({
        phoneNumberId: p.phoneNumberId,
        accessToken: p.accessToken,
      });
      verdict = judgeProbe(outcome);
      detail = outcome.ok ? null : outcome.summary;
    }
    if (verdict === 'accepted') {
      const reconnected = await db.transaction(async (tx) => {
        if (!(await recordProbeAccepted(tx, p))) return false;
        await deps.invalidateCustomer(tx, p.customerId);
        return true;
      });
      if (reconnected)
        log.info(
          { accountId: p.accountId, probes: p.attempts + 1 },
          'chat account reconnected: the provider accepts its token again',
        );
      return;
    }
    // After k failed probes the next waits schedule[k] (the mark waited schedule[0]); backoffDelayMs counts from 1.
    const delayMs = backoffDelayMs(p.attempts + 2, schedule, { scale: options.retryTimeScale });
    const next = await recordProbeFailed(db, p, delayMs);
    if (next)
      log.info(
        { accountId: p.accountId, verdict, detail, attempts: next.attempts, nextProbeAt: next.nextAt },
        'chat account probe: token not accepted yet',
      );
  }

  const loop = createWorkerLoop({
    name: 'account-prober',
    pollMs: options.pollMs,
    log,
    async pass() {
      const due = await claimDueProbes(db, deps.sealer, BATCH, options.leaseSeconds);
      await Promise.all(
        due.map((p) =>
          probe(p).catch((err: unknown) => log.error({ err, accountId: p.accountId }, 'chat account probe failed')),
        ),
      );
      return { didWork: due.length > 0 };
    },
  });

  return { start: () => loop.start(), stop: () => loop.stop() };
}
