// The dispatcher worker: claims due messages in batches and moves each one step forward.
// Sandbox messages are simulated; live ones are checked against their account, paced into
// per-account slots shared by every worker process, sent through the provider client, and
// their outcomes are written back in group-committed batches.
import crypto from 'node:crypto';
import os from 'node:os';

import type { Logger } from 'pino';

import { loadSendAccounts, markAccountError, type SendAccount } from '../accounts/send-accounts.js';
import { failCancelledMessages, findCancelled, lockQuotaForRefund } from '../broadcasts/cancel-messages.js';
import type { Db, Queryable } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { applyParkedReceipts } from '../lifecycle/apply-receipt.js';
import { applyTransitions } from '../lifecycle/apply-transitions.js';
import { claimDue, type Claimed, releaseLeases } from '../lifecycle/claim.js';
import type { Transition } from '../lifecycle/transitions.js';
import * as transition from '../lifecycle/transitions.js';
import { MESSAGES_READY } from '../messages/insert-batch.js';
import type { ProviderClient } from '../provider/cloud-api.js';
import type { Sealer } from '../shared/crypto.js';
import { createGroupCommit } from '../shared/group-commit.js';
import type { AccountStatus } from '../shared/vocab.js';
import { createWorkerLoop } from '../shared/worker-loop.js';
import { type AttemptResult, recordAttempt, refuseBeforeSending } from './live-send.js';
import { reserveSlots } from './pacing.js';
import { type MediaPreparer, needsMediaStep } from './prepare-media.js';
import { simulateSandboxStep } from './sandbox-simulator.js';

export type DispatcherOptions = {
  batchSize: number;
  leaseSeconds: number;
  pollMs: number;
  sandboxStepMs: number;
  retryTimeScale: number;
  /** Live sends in flight at once in this process. */
  maxInFlight: number;
  /** How far ahead an account's send slots may be booked: inside the lease, with room for the send. */
  pacingHorizonMs: number;
  /** When an account marked after a rejected token is first probed (scaled; see accounts/account-prober.ts). */
  firstAccountProbeDelayMs: number;
};

type Outcome = { result: AttemptResult; message: Claimed };

const PARKED_SWEEP_MS = 5000;

/** Media steps (fetch, upload) at once in one process: each may hold a file of up to 20 MB. */
const MAX_MEDIA_STEPS = 4;
/** A message whose media step found no room waits this long before it is claimed again. */
const MEDIA_STEP_RETRY_MS = 250;

/** How late a timer may fire and still send (see sendAt). */
const MAX_LATE_MS = 25;

/** The ids every log line about a message carries. */
const messageIds = (m: Claimed) => ({ messageId: m.id, customerId: m.customerId, accountId: m.chatAccountId });

const earliest = (ts: Transition[]) =>
  ts.reduce<Date | null>((min, t) => (t.nextDueAt && (!min || t.nextDueAt < min) ? t.nextDueAt : min), null);

export function createDispatcher(deps: {
  db: Db;
  log: Logger;
  options: DispatcherOptions;
  provider: ProviderClient;
  media: MediaPreparer;
  sealer: Sealer;
  invalidateCustomer: (tx: Queryable, customerId: string) => Promise<void>;
}) {
  const { db, log, options, provider } = deps;
  const workerId = `${os.hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  let inFlight = 0;
  let mediaSteps = 0;
  let lastSweep = Date.now();

  // Outcomes of sends are written together: one transaction for many messages.
  const outcomes = createGroupCommit<Outcome, void>(
    async (items) => {
      // Accounts to mark, once each and in id order (no deadlock between concurrent batches).
      const marks = new Map<string, { customerId: string; status: AccountStatus; errorCode: string }>();
      for (const o of items) {
        const v = o.result.verdict;
        if (v?.action === 'account')
          marks.set(o.message.chatAccountId, {
            customerId: o.message.customerId,
            status: v.accountStatus,
            errorCode: v.errorCode,
          });
      }
      await retryTransient(() =>
        db.transaction(async (tx) => {
          await applyTransitions(
            tx,
            workerId,
            items.map((o) => o.result.transition),
          );
          const wamids = items.flatMap((o) =>
            o.result.transition.providerMessageId ? [o.result.transition.providerMessageId] : [],
          );
          if (wamids.length > 0) await applyParkedReceipts(tx, wamids);
          for (const [accountId, mark] of [...marks].sort(([a], [b]) => (a < b ? -1 : 1))) {
            await markAccountError(tx, accountId, mark.status, mark.errorCode, options.firstAccountProbeDelayMs);
            await deps.invalidateCustomer(tx, mark.customerId);
          }
        }),
      );
      for (const [accountId, mark] of marks) {
        blockedAccounts.add(accountId);
        log.warn(
          { accountId, errorCode: mark.errorCode, status: mark.status },
          'chat account marked after a provider error',
        );
      }
      for (const o of items) if (o.result.transition.nextDueAt) loop.wake(o.result.transition.nextDueAt);
      return items.map(() => undefined);
    },
    { maxBatch: 500, maxInFlight: db.kind === 'pglite' ? 1 : 2 },
  );

  // Timers of sends not fired yet: cancelled on shutdown (their rows' leases are released then).
  const timers = new Set<NodeJS.Timeout>();
  // Accounts this process marked after an account-level error: their booked sends are not fired.
  // Reloaded on each claim (loadSendAccounts), so a reconnected account sends again.
  const blockedAccounts = new Set<string>();

  /**
   * Fires a send at its slot (epoch ms). A send whose timer fires more than MAX_LATE_MS after its
   * slot goes back to the queue instead: a late burst could otherwise overlap another worker's
   * next slots and push one second over the account's cap.
   */
  function sendAt(m: Claimed, account: SendAccount, slotMs: number) {
    inFlight++;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        const done = () => {
          inFlight--;
          loop.wake();
        };
        // Late, or its account was just marked unusable here: back to the queue (the next claim
        // fails it without a call when the account is not CONNECTED).
        if (Date.now() - slotMs > MAX_LATE_MS || blockedAccounts.has(account.id)) {
          const now = new Date();
          void outcomes
            .submit({
              message: m,
              result: { transition: transition.wait(m, now, now), verdict: null },
            })
            .catch((err: unknown) =>
              log.error({ err, ...messageIds(m) }, 'returning a late send to the queue failed; its lease will expire'),
            )
            .finally(done);
          return;
        }
        void provider
          .send(
            { phoneNumberId: account.phoneNumberId!, accessToken: account.accessToken!, accountId: account.id },
            m.recipient,
            m.content,
            m.id,
            m.providerMedia,
          )
          .then((outcome) =>
            outcomes.submit({ message: m, result: recordAttempt(m, outcome, new Date(), options.retryTimeScale) }),
          )
          .catch((err: unknown) =>
            log.error(
              { err, ...messageIds(m) },
              'recording a send outcome failed; the lease will expire and the message be retried',
            ),
          )
          .finally(done);
      },
      Math.max(0, slotMs - Date.now()),
    );
    timers.add(timer);
  }

  /**
   * Runs a message's media step in the background; its outcome (media ready: due again at once,
   * or failed, or a retry) is written like a send's.
   */
  function prepareMedia(m: Claimed, account: SendAccount) {
    inFlight++;
    mediaSteps++;
    void deps.media
      .prepare(m, account)
      .then((result) => outcomes.submit({ message: m, result }))
      .catch((err: unknown) =>
        log.error({ err, ...messageIds(m) }, 'the media step failed; the lease will expire and the message be retried'),
      )
      .finally(() => {
        inFlight--;
        mediaSteps--;
        loop.wake();
      });
  }

  /** Sends or refuses each live message; returns when deferred ones become due, if any. */
  async function dispatchLive(live: Claimed[]): Promise<Date | null> {
    const now = new Date();
    const accounts = await loadSendAccounts(db, deps.sealer, [...new Set(live.map((m) => m.chatAccountId))]);
    for (const a of accounts.values()) if (a.status === 'CONNECTED') blockedAccounts.delete(a.id);
    const refused: Transition[] = [];
    const deferred: Transition[] = [];
    const byAccount = new Map<string, Claimed[]>();
    for (const m of live) {
      const account = accounts.get(m.chatAccountId);
      const refusal = refuseBeforeSending(m, account, now);
      if (refusal) refused.push(refusal);
      else if (needsMediaStep(m)) {
        // Media are fetched and uploaded before the send is booked into the account's slots.
        if (mediaSteps < MAX_MEDIA_STEPS) prepareMedia(m, account!);
        else deferred.push(transition.wait(m, now, new Date(now.getTime() + MEDIA_STEP_RETRY_MS)));
      } else byAccount.set(m.chatAccountId, [...(byAccount.get(m.chatAccountId) ?? []), m]);
    }
    // At most one second of an account's throughput per batch; the rest waits for its turn.
    const wants = [...byAccount].map(([accountId, ms]) => {
      const mps = accounts.get(accountId)!.throughputMps;
      return { accountId, count: Math.min(ms.length, Math.max(1, mps)), mps };
    });
    const reservations = await reserveSlots(db, wants, options.pacingHorizonMs);
    for (const [accountId, ms] of byAccount) {
      const r = reservations.get(accountId);
      const account = accounts.get(accountId)!;
      ms.forEach((m, i) => {
        if (r && i < r.count) sendAt(m, account, r.startMs + i * r.intervalMs);
        else {
          // Claimed again half-way through the booked schedule, so the next slots are reserved in
          // time and the account's schedule has no gap (and no reservation runs past the lease).
          const bookedUntil = r ? r.startMs + r.count * r.intervalMs : Date.now() + options.pacingHorizonMs;
          deferred.push(transition.wait(m, now, new Date(Math.max(Date.now(), (Date.now() + bookedUntil) / 2))));
        }
      });
    }
    if (refused.length + deferred.length > 0)
      await retryTransient(() => db.transaction((tx) => applyTransitions(tx, workerId, [...refused, ...deferred])));
    return earliest(deferred);
  }

  /** Claimed messages of cancelled broadcasts are failed (never sent); returns the others. */
  async function failCancelled(live: Claimed[]): Promise<Claimed[]> {
    const ids = [...new Set(live.flatMap((m) => (m.broadcastId !== null ? [m.broadcastId] : [])))];
    const cancelled = await findCancelled(db, ids);
    if (cancelled.size === 0) return live;
    await retryTransient(() =>
      db.transaction(async (tx) => {
        // Quota rows first and in customer order, as inserts lock them (no deadlock).
        const byCustomer = [...cancelled].sort(([, a], [, b]) =>
          a.customerId < b.customerId ? -1 : a.customerId > b.customerId ? 1 : 0,
        );
        for (const [, b] of byCustomer) await lockQuotaForRefund(tx, b);
        for (const [id, b] of byCustomer)
          await failCancelledMessages(
            tx,
            workerId,
            b,
            live.filter((m) => m.broadcastId === id),
          );
      }),
    );
    return live.filter((m) => m.broadcastId === null || !cancelled.has(m.broadcastId));
  }

  async function pass() {
    const room = options.maxInFlight - inFlight;
    if (room <= 0) return { didWork: false };
    const claimed = await claimDue(db, workerId, Math.min(options.batchSize, room), options.leaseSeconds);
    // Every few seconds, busy or not, sweep receipts parked in a race with a commit (never lost).
    if (Date.now() - lastSweep > PARKED_SWEEP_MS) {
      lastSweep = Date.now();
      await retryTransient(() => db.transaction((tx) => applyParkedReceipts(tx, null)));
    }
    if (claimed.length === 0) return { didWork: false };
    const now = new Date();
    const sandbox = claimed.filter((m) => m.sandbox);
    const live = await failCancelled(claimed.filter((m) => !m.sandbox));
    const simulated = sandbox
      .map((m) => simulateSandboxStep(m, now, options.sandboxStepMs))
      .filter((t): t is Transition => t !== null);
    if (simulated.length > 0)
      await retryTransient(() => db.transaction((tx) => applyTransitions(tx, workerId, simulated)));
    const liveDue = live.length > 0 ? await dispatchLive(live) : null;
    const simulatedDue = earliest(simulated);
    const nextDueAt =
      liveDue && simulatedDue ? (liveDue < simulatedDue ? liveDue : simulatedDue) : (liveDue ?? simulatedDue);
    log.debug({ worker: workerId, sandbox: sandbox.length, live: live.length }, 'dispatched batch');
    return { didWork: true, nextDueAt };
  }

  const loop = createWorkerLoop({
    name: 'dispatcher',
    pollMs: options.pollMs,
    log,
    pass,
    wakeOn: { db, channel: MESSAGES_READY },
  });

  return {
    workerId,
    start: () => loop.start(),
    async stop() {
      await loop.stop();
      for (const t of timers) clearTimeout(t); // not sent: their leases are released below
      inFlight -= timers.size;
      timers.clear();
      while (inFlight > 0) await new Promise((r) => setTimeout(r, 20));
      await outcomes.drain();
      await releaseLeases(db, workerId);
    },
  };
}
