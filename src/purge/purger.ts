// The purger: deletes messages past their lifetime (TTL clipped to plan retention), uploads past
// theirs, and old events. Each table's deletion is its owner's purge function (ARCHITECTURE.md,
// "Who writes what"); this module writes only purge_runs.
// Every process runs the loop; a run-record row under an advisory lock lets one process per
// interval do the pass, and each chunk is its own short transaction.
import type { Logger } from 'pino';

import { purgePortfolioRecipients } from '../accounts/portfolio-store.js';
import { purgeBroadcasts } from '../broadcasts/broadcast-store.js';
import type { Db } from '../db/db.js';
import { purgeInboundMessages, purgeInboundReceptions } from '../inbound/inbound-store.js';
import { purgeMedia } from '../lifecycle/media-lifecycle.js';
import { forgetPairs } from '../lifecycle/pace-recipient.js';
import { purgeDeliveries, purgeEvents } from '../lifecycle/purge-events.js';
import { purgeExpiredMessages } from '../lifecycle/purge-messages.js';
import { purgeParkedReceipts } from '../lifecycle/purge-receipts.js';
import { purgePasswordResets } from '../portal/password-reset-service.js';
import { purgeExpiredSessions } from '../portal/session-service.js';
import { purgeLoginChallenges } from '../portal/two-factor-service.js';
import { purgeLoginFailures } from '../portal/user-service.js';

const LOCK_KEY = 727_002;
const CHUNK = 5000;

export type PurgeResult = {
  messages: number;
  broadcasts: number;
  events: number;
  receipts: number;
  deliveries: number;
  inbound: number;
  media: number;
};

/** One purge pass, whoever's turn it is. Returns null when another process holds the turn. */
export async function purgeOnce(db: Db, intervalSeconds: number, force = false): Promise<PurgeResult | null> {
  const myTurn = await db.transaction(async (tx) => {
    const [lock] = await tx.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [LOCK_KEY]);
    if (!lock?.ok) return false;
    await tx.query(`INSERT INTO purge_runs (name, last_run_at) VALUES ('purger', '-infinity') ON CONFLICT DO NOTHING`);
    const claimed = await tx.query(
      `UPDATE purge_runs SET last_run_at = now()
        WHERE name = 'purger' AND ($2 OR last_run_at <= now() - make_interval(secs => $1)) RETURNING name`,
      [intervalSeconds * 0.9, force],
    );
    return claimed.length > 0;
  });
  if (!myTurn) return null;
  const messages = await purgeExpiredMessages(db, CHUNK);
  // A broadcast record goes once its lifetime has passed and its messages are gone.
  const broadcasts = await purgeBroadcasts(db, CHUNK);
  // Uploads: expired unused ones, and used ones whose messages are gone (after the messages, so a
  // file never outlives the messages that use it).
  const media = await purgeMedia(db, CHUNK);
  const receipts = await purgeParkedReceipts(db, CHUNK);
  const deliveries = await purgeDeliveries(db, CHUNK);
  const events = await purgeEvents(db, CHUNK);
  // Inbox content follows plan retention; the sender aggregate is never purged. Receptions (the
  // dedupe of provider retries, which stop after 7 days) go after 8.
  const inbound = await purgeInboundMessages(db, CHUNK);
  await purgeInboundReceptions(db, CHUNK);
  // Failed portal logins past the throttle's window count for nothing: a few rows at most per
  // address and account, so one statement.
  await purgeLoginFailures(db);
  await purgeExpiredSessions(db);
  await purgeLoginChallenges(db);
  await purgePasswordResets(db);
  // Recipients no longer paced after the pair rate limit (decision 0037): a few rows, one statement.
  await forgetPairs(db);
  // Conversation starts older than the messaging limit's 24 hours no longer count (decision 0044).
  await purgePortfolioRecipients(db);
  return { messages, broadcasts, events, receipts, deliveries, inbound, media };
}

export function createPurger(deps: { db: Db; log: Logger; intervalSeconds: number }) {
  const { db, log, intervalSeconds } = deps;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> = Promise.resolve();

  const tick = () => {
    running = purgeOnce(db, intervalSeconds)
      .then((r) => {
        if (r) log.info({ purged: r }, 'purge pass done');
      })
      .catch((err: unknown) => log.error({ err }, 'purge pass failed'));
  };

  return {
    start() {
      tick();
      // Check often (at most every minute); the run record decides whether a pass is due.
      timer = setInterval(tick, Math.min(intervalSeconds, 60) * 1000);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
