// POST /inbound-messages/{id}/read: marks a received message read at the provider (blue ticks),
// with the typing indicator when asked (decision 0034). Once per message: the first call records
// readAt before it calls the provider (a concurrent second call sees it and calls nothing) and
// takes it back if the provider refuses; later calls answer what was recorded. The call takes a
// slot of the account's pacing (pacing.ts), so it counts against the account's rate with its
// sends. For the caller's customer and key scope only (any other id: 404); a sandbox key
// simulates for such an id (nothing is recorded or sent: inbound messages are live data).
import { loadSendAccounts } from '../accounts/send-accounts.js';
import { type Caller, readScope, requirePlan } from '../auth/caller.js';
import type { Db } from '../db/db.js';
import { claimReadMark, clearReadMark } from '../inbound/inbound-store.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ProviderClient } from '../provider/cloud-api.js';
import type { Sealer } from '../shared/crypto.js';
import { errors } from '../shared/errors.js';
import { scopeWhere } from '../shared/scope.js';
import { createDbClock, reserveSlots } from './pacing.js';

export type ReadMark = { inboundMessageId: string; readAt: string; typing: boolean; sandbox?: true };

export type ReadMarker = ReturnType<typeof createReadMarker>;

/** How long a request waits for a pacing slot before it answers 503 provider_unavailable. */
const SLOT_WAIT_MS = 5000;

type Deps = {
  db: Db;
  sealer: Sealer;
  provider: Pick<ProviderClient, 'markRead'>;
  metrics: Pick<Metrics, 'markRead'>;
  /** How far ahead a slot may be booked (the dispatcher's horizon). */
  horizonMs: number;
};

export function createReadMarker(deps: Deps) {
  const { db } = deps;

  return {
    async markRead(caller: Caller, id: string, typing: boolean): Promise<ReadMark> {
      requirePlan(caller, 'inbox');
      const scope = readScope(caller);
      // The id is looked up in the caller's customer and account whatever the key: a sandbox key
      // is answered a simulation for an id of its own (and 404 for any other), never the live mark.
      const params: unknown[] = [id.toLowerCase()];
      const where = ['id = $1::uuid', ...scopeWhere({ ...scope, sandboxOnly: false }, 'inbound_messages', params)];
      const [row] = await db.query<{
        chat_account_id: string;
        provider_message_id: string;
        read_at: Date | null;
        read_typing: boolean | null;
      }>(
        `SELECT chat_account_id, provider_message_id, read_at, read_typing FROM inbound_messages
          WHERE ${where.join(' AND ')}`,
        params,
      );
      // An id that is not the caller's is not found, for a sandbox key as for a live one (issue #32).
      if (!row) throw errors.inboundMessageNotFound();
      if (scope.sandboxOnly) {
        deps.metrics.markRead.inc({ result: 'simulated' });
        return { inboundMessageId: id.toLowerCase(), readAt: new Date().toISOString(), typing, sandbox: true };
      }
      const inboundMessageId = id.toLowerCase();
      const already = (r: { read_at: Date; read_typing: boolean | null }): ReadMark => {
        deps.metrics.markRead.inc({ result: 'already' });
        return { inboundMessageId, readAt: r.read_at.toISOString(), typing: r.read_typing === true };
      };
      if (row.read_at) return already({ read_at: row.read_at, read_typing: row.read_typing });
      const claimed = await claimReadMark(db, inboundMessageId, typing);
      if (!claimed) {
        const [now] = await db.query<{ read_at: Date; read_typing: boolean | null }>(
          'SELECT read_at, read_typing FROM inbound_messages WHERE id = $1',
          [inboundMessageId],
        );
        if (!now?.read_at) throw errors.inboundMessageNotFound();
        return already(now);
      }
      try {
        await callProvider(deps, row.chat_account_id, row.provider_message_id, typing);
      } catch (err) {
        await clearReadMark(db, inboundMessageId);
        deps.metrics.markRead.inc({ result: 'failed' });
        throw err;
      }
      deps.metrics.markRead.inc({ result: 'sent' });
      return { inboundMessageId, readAt: claimed.read_at.toISOString(), typing };
    },
  };
}

/** The database's clock as this process reads it (slots are booked in it; decision 0031). */
const dbClock = createDbClock();

/** One slot of the account's pacing, waited for; false when none came within SLOT_WAIT_MS. */
async function takeSlot(db: Db, horizonMs: number, accountId: string, mps: number): Promise<boolean> {
  const deadline = Date.now() + SLOT_WAIT_MS;
  for (;;) {
    const r = (await reserveSlots(db, [{ accountId, count: 1, mps }], Math.min(horizonMs, SLOT_WAIT_MS), dbClock)).get(
      accountId,
    );
    if (r) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, r.startMs - Date.now())));
      return true;
    }
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function callProvider(deps: Deps, accountId: string, providerMessageId: string, typing: boolean): Promise<void> {
  const account = (await loadSendAccounts(deps.db, deps.sealer, [accountId])).get(accountId);
  if (!account?.phoneNumberId || !account.accessToken)
    throw errors.readNotMarked('the chat account has no usable phone number id or access token');
  if (!(await takeSlot(deps.db, deps.horizonMs, accountId, account.throughputMps))) throw errors.providerBusy();
  const outcome = await deps.provider.markRead(
    { phoneNumberId: account.phoneNumberId, accessToken: account.accessToken, accountId },
    providerMessageId,
    typing,
  );
  if (!outcome.ok) throw errors.readNotMarked(`the provider did not mark the message read: ${outcome.summary}`);
}
