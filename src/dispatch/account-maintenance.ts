// The provider's maintenance refusal (131057, e.g. a throughput upgrade: up to a minute in which
// the number takes no sends; decision 0042). The account's sends pause together, in the schedule
// every worker books from (account_pacing), instead of each message meeting the refusal; when the
// pause ends, the number's throughput level is read again and the pacing ceiling follows it.
import type { Logger } from 'pino';

import { loadSendAccounts } from '../accounts/send-accounts.js';
import { recordThroughputLevel } from '../accounts/throughput-level.js';
import type { Db } from '../db/db.js';
import type { ProviderClient } from '../provider/cloud-api.js';
import type { Sealer } from '../shared/crypto.js';

/** The provider's maintenance refusal, which phone-number reads answer too during an upgrade. */
const MAINTENANCE_CODE = 131057;
/** Reads of the level after a pause while the number is still in maintenance, at most. */
const READ_TRIES = 5;

/**
 * Reads a paused account's throughput level once its pause is over (one read per account at a
 * time in this process): an upgrade that caused the pause has then finished.
 */
export function createThroughputRefresh(deps: {
  db: Db;
  log: Logger;
  sealer: Sealer;
  provider: Pick<ProviderClient, 'readPhoneNumber'>;
}) {
  const pending = new Map<string, NodeJS.Timeout>();

  /** Reads and records the level; true when the number is still in maintenance (read again later). */
  async function refresh(accountId: string): Promise<boolean> {
    const account = (await loadSendAccounts(deps.db, deps.sealer, [accountId])).get(accountId);
    if (!account?.phoneNumberId || !account.accessToken) return false;
    const outcome = await deps.provider.readPhoneNumber({
      phoneNumberId: account.phoneNumberId,
      accessToken: account.accessToken,
    });
    if (!outcome.ok) return outcome.detail?.code === MAINTENANCE_CODE;
    if (!outcome.throughputLevel) return false;
    const mps = await recordThroughputLevel(deps.db, accountId, outcome.throughputLevel);
    if (mps !== null)
      deps.log.info(
        { accountId, throughputLevel: outcome.throughputLevel, throughputMps: mps },
        'the number throughput level changed: its pacing ceiling follows',
      );
    return false;
  }

  const api = {
    /** The account was paused for `afterMs`: read its level then (again while still in maintenance). */
    after(accountId: string, afterMs: number, tries = READ_TRIES) {
      if (pending.has(accountId)) return;
      const timer = setTimeout(() => {
        pending.delete(accountId);
        refresh(accountId)
          .then((again) => {
            if (again && tries > 1) api.after(accountId, afterMs, tries - 1);
          })
          .catch((err: unknown) => deps.log.warn({ err, accountId }, 'reading the number throughput level failed'));
      }, afterMs);
      timer.unref();
      pending.set(accountId, timer);
    },
    stop() {
      for (const t of pending.values()) clearTimeout(t);
      pending.clear();
    },
  };
  return api;
}
