// The live path of the dispatcher: each claimed message is refused (account state, send policy),
// sent to its media step, or booked into its account's paced slots and fired at its slot; what
// cannot go now is put back in the queue. Outcomes are recorded through the worker.
import type { Logger } from 'pino';

import { loadSendAccounts, type SendAccount } from '../accounts/send-accounts.js';
import { pacedMps } from '../accounts/send-pace.js';
import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { applyTransitions, logChanges } from '../lifecycle/apply-transitions.js';
import { type Claimed, startAttempts } from '../lifecycle/claim.js';
import * as transition from '../lifecycle/transitions.js';
import { countedAtStart, type Transition } from '../lifecycle/transitions.js';
import type { ProviderClient, ProviderRoute, SendOutcome } from '../provider/cloud-api.js';
import type { Sealer } from '../shared/crypto.js';
import { createGroupCommit, type GroupCommit } from '../shared/group-commit.js';
import type { LeasedWorker } from '../shared/worker-loop.js';
import { changeEvents, type DispatchHooks } from './dispatch-events.js';
import { writeKept } from './kept-outcomes.js';
import { type AttemptResult, recordAttempt, refuseBeforeSending } from './live-send.js';
import { holdMarketingRoute, marketingRoutes, notOnboarded } from './marketing-route.js';
import type { Outcome } from './outcomes.js';
import { createDbClock, type DbClock, type Reservation, reserveSlots } from './pacing.js';
import { type MediaPreparer, needsMediaStep } from './prepare-media.js';
import type { RecipientChecks } from './recipient-checks.js';
import type { PairPacing } from './recipient-pacing.js';

/** A message whose media step found no room waits this long before it is claimed again. */
const MEDIA_STEP_RETRY_MS = 250;

/** How late a timer may fire and still send (see sendAt). */
const MAX_LATE_MS = 25;
/** Room left, when a late send is booked again, for one second of the account's slots. */
const REBOOK_SPAN_MS = 1000;

/** The ids every log line about a message carries. */
const messageIds = (m: Claimed) => ({ messageId: m.id, customerId: m.customerId, accountId: m.chatAccountId });

type Live = {
  db: Db;
  log: Logger;
  provider: ProviderClient;
  media: MediaPreparer;
  sealer: Sealer;
  retryTimeScale: number;
  /** How long a send that may have reached the provider waits for its receipt (SEND_CONFIRM_WAIT_MS; decision 0061). */
  confirmWaitMs: number;
  /** The claim's lease, extended while an outcome that could not be written is kept (decision 0061). */
  leaseSeconds: number;
  /** How far ahead an account's send slots may be booked. */
  pacingHorizonMs: number;
  /** How long after its booking a send may still get its provider connection (decision 0061). */
  sendStartRoomMs: number;
  /** Media steps (fetch, upload) at once in this process (MAX_MEDIA_STEPS). */
  maxMediaSteps: number;
  worker: Pick<LeasedWorker<Outcome>, 'workerId' | 'begin' | 'record'>;
  /** Where late sends, pair-held sends, kept outcomes and written changes are told (dispatch-events.ts). */
  hooks: DispatchHooks;
  /** Pair-rate pacing (decision 0037), shared with the outcome writer that learns it. */
  pairPacing: PairPacing;
  /** Template categories, for the route of a MARKETING template (decision 0038). */
  categories: RecipientChecks['categories'];
  /** How long an account's sends pause after the provider's maintenance refusal (131057; decision 0042). */
  maintenancePauseMs: number;
  /** The booked sends and blocked accounts, which the worker's outcome writer and its stop act on too. */
  held: HeldSends;
  mediaSteps: number;
  /** Sends whose timer fired late, waiting (one event-loop turn) to be booked again together. */
  late: (Booked & { settle: () => void })[];
  /**
   * Counts the attempt of each send or media step that starts, before it calls the provider: the
   * ones starting together share one statement. Resolves false when the lease was lost (not sent).
   */
  starts: GroupCommit<string, boolean>;
  /** The database clock's offset from this process's: slots are booked in the one, fired in the other. */
  dbClock: DbClock;
};

/**
 * What this process holds between a claim and its outcome: booked sends not fired yet, and the
 * accounts whose booked sends must not fire. Built before the worker (its outcome writer blocks
 * accounts, its stop cancels the timers) and before the live path (which books and fires them).
 */
export type HeldSends = {
  /** Timers of sends not fired yet, each with the end of its in-flight count: cancelled on shutdown. */
  timers: Map<NodeJS.Timeout, () => void>;
  /**
   * Accounts this process marked after an account-level error: their booked sends are not fired.
   * Reloaded on each claim (loadSendAccounts), so a reconnected account sends again.
   */
  blocked: Set<string>;
  /**
   * Accounts the provider refused for maintenance (131057), until when (epoch ms): their booked
   * sends go back to the queue, due then, without an attempt (decision 0042).
   */
  paused: Map<string, number>;
  /**
   * Accounts the provider refused for the number's throughput (130429), when this process last saw
   * it (epoch ms), and when the refusal's outcome (which lowers the pace) is written: their sends
   * booked before then, at the pace that was too high, go back to the queue with no attempt used
   * once the lowered pace is in the database, and are booked again at it (decision 0055).
   */
  slowed: Map<string, { atMs: number; lowered: Promise<void> }>;
  /** Shutdown began: late sends are not booked again. */
  stopping: boolean;
  /** The account was just marked unusable: its booked sends go back to the queue. */
  block(accountId: string): void;
  /** Shutdown: booked sends not fired yet are not sent (their leases are released). */
  cancelTimers(): void;
};

/** `onCancel`: more to stop with the booked sends (the throughput reads after a pause). */
export function createHeldSends(onCancel: () => void = () => {}): HeldSends {
  const held: HeldSends = {
    timers: new Map(),
    blocked: new Set(),
    paused: new Map(),
    slowed: new Map(),
    stopping: false,
    block: (accountId) => void held.blocked.add(accountId),
    cancelTimers() {
      held.stopping = true;
      for (const [timer, done] of held.timers) {
        clearTimeout(timer);
        done();
      }
      held.timers.clear();
      onCancel();
    },
  };
  return held;
}

/**
 * A send booked into its account's slots; `deadlineMs`: the last time a slot of it may start;
 * `route`: the provider endpoint it goes to (decision 0038; absent: /messages); `bookedAtMs`: when
 * it was first booked (at the account's pace then).
 */
type Booked = { m: Claimed; account: SendAccount; deadlineMs: number; route?: ProviderRoute; bookedAtMs: number };

/**
 * The latest time a booked send may get its provider connection: its answer (PROVIDER_TIMEOUT_MS
 * from then) and its outcome's write still come inside the claim's lease. Waiting is not sending.
 */
const startByMs = (live: Live, booked: Booked) => booked.bookedAtMs + live.sendStartRoomMs;

export const earliest = (ts: Transition[]) =>
  ts.reduce<Date | null>((min, t) => (t.nextDueAt && (!min || t.nextDueAt < min) ? t.nextDueAt : min), null);

export function createLiveDispatch(deps: Omit<Live, 'mediaSteps' | 'late' | 'starts' | 'dbClock'>) {
  const starts = createGroupCommit<string, boolean>(
    async (ids) => {
      const counted = await retryTransient(() => startAttempts(deps.db, deps.worker.workerId, ids));
      return ids.map((id) => counted.has(id));
    },
    { maxBatch: 500, maxInFlight: deps.db.kind === 'pglite' ? 1 : 2 },
  );
  const live: Live = { ...deps, mediaSteps: 0, late: [], starts, dbClock: createDbClock() };
  return {
    /** Sends or refuses each live message; returns when deferred ones become due, if any. */
    dispatch: (messages: Claimed[]) => dispatchLive(live, messages),
  };
}

async function dispatchLive(live: Live, messages: Claimed[]): Promise<Date | null> {
  const now = new Date();
  const accounts = await loadSendAccounts(live.db, live.sealer, [...new Set(messages.map((m) => m.chatAccountId))]);
  for (const a of accounts.values()) if (a.status === 'CONNECTED') live.held.blocked.delete(a.id);
  const refused: Transition[] = [];
  const deferred: Transition[] = [];
  const ready: Claimed[] = [];
  for (const m of messages) {
    const account = accounts.get(m.chatAccountId);
    const refusal = refuseBeforeSending(m, account, now);
    if (refusal) refused.push(refusal);
    else if (needsMediaStep(m)) {
      // Media are fetched and uploaded before the send is booked into the account's slots.
      if (live.mediaSteps < live.maxMediaSteps) prepareMedia(live, m, account!);
      else deferred.push(transition.wait(m, now, new Date(now.getTime() + MEDIA_STEP_RETRY_MS)));
    } else ready.push(m);
  }
  // A recipient the provider limited (131056) waits its turn without taking an account slot.
  const paced = await live.pairPacing.split(ready);
  deferred.push(...paced.held.map((h) => transition.wait(h.m, now, h.until)));
  if (paced.held.length > 0) live.hooks.emit('pairHeld', { count: paced.held.length });
  const routes = await marketingRoutes(live.categories, accounts, paced.go, now);
  const byAccount = new Map<string, Claimed[]>();
  for (const m of paced.go) byAccount.set(m.chatAccountId, [...(byAccount.get(m.chatAccountId) ?? []), m]);
  // Messages tried before take their account's later slots: one whose send stopped its worker
  // (claimed again after its lease) then cannot hold up the others of its batch a second time.
  for (const ms of byAccount.values()) ms.sort((a, b) => a.attemptCount - b.attemptCount);
  deferred.push(...(await bookSends(live, byAccount, accounts, routes, now)));
  if (refused.length + deferred.length > 0)
    logChanges(
      live.log,
      await retryTransient(() =>
        live.db.transaction((tx) => applyTransitions(tx, live.worker.workerId, [...refused, ...deferred])),
      ),
      'refused or put back before sending',
      changeEvents(live.hooks),
    );
  return earliest(deferred);
}

/**
 * Books at most one second of each account's throughput and fires those sends at their slots;
 * returns the transitions that put the rest back in the queue.
 */
async function bookSends(
  live: Live,
  byAccount: Map<string, Claimed[]>,
  accounts: Map<string, SendAccount>,
  routes: Map<string, ProviderRoute>,
  now: Date,
): Promise<Transition[]> {
  const wants = [...byAccount].map(([accountId, ms]) => {
    // Below the ceiling for a while after the provider refused the number's throughput (decision 0055).
    const mps = pacedMps(accounts.get(accountId)!);
    return { accountId, count: Math.min(ms.length, Math.max(1, Math.floor(mps))), mps };
  });
  const reservations = await reserveSlots(live.db, wants, live.pacingHorizonMs, live.dbClock);
  const back: Transition[] = [];
  for (const [accountId, ms] of byAccount) {
    const r = reservations.get(accountId);
    const account = accounts.get(accountId)!;
    ms.forEach((m, i) => {
      // The slots were booked inside the claim's lease (pacingHorizonMs from now): so are any later ones.
      if (r && i < r.count)
        sendAt(
          live,
          {
            m,
            account,
            deadlineMs: now.getTime() + live.pacingHorizonMs,
            route: routes.get(m.id),
            bookedAtMs: now.getTime(),
          },
          r.startMs + i * r.intervalMs,
        );
      else {
        // Claimed again half-way through the booked schedule, so the next slots are reserved in
        // time and the account's schedule has no gap (and no reservation runs past the lease).
        const bookedUntil = r ? r.startMs + r.count * r.intervalMs : Date.now() + live.pacingHorizonMs;
        back.push(transition.wait(m, now, new Date(Math.max(Date.now(), (Date.now() + bookedUntil) / 2))));
      }
    });
  }
  return back;
}

/**
 * Fires a send at its slot (epoch ms). A send whose timer fires more than MAX_LATE_MS after its
 * slot is not sent then: a late burst could otherwise overlap another worker's next slots and
 * push one second over the account's cap. It is booked again instead (rebook), still claimed.
 */
function sendAt(live: Live, booked: Booked, slotMs: number) {
  const done = live.worker.begin();
  const timer = setTimeout(
    () => {
      live.held.timers.delete(timer);
      void fire(live, booked, slotMs).finally(done);
    },
    Math.max(0, slotMs - Date.now()),
  );
  live.held.timers.set(timer, done);
}

/** Back to the queue, due now (the next claim fails it without a call when the account is not CONNECTED). */
function putBack(live: Live, m: Claimed, dueMs?: number): Promise<void> {
  const now = new Date();
  const due = dueMs !== undefined ? new Date(dueMs) : now;
  return live.worker
    .record({ message: m, result: { transition: transition.wait(m, now, due), verdict: null } })
    .catch((err: unknown) =>
      live.log.error({ err, ...messageIds(m) }, 'returning a send to the queue failed; its lease will expire'),
    );
}

/**
 * Counts the attempt (startAttempts, with the others starting now), then runs `step`; its outcome
 * is recorded as counted, and kept and written again while that fails (kept-outcomes.ts). Not run
 * when the lease was lost (the message's new holder sends it).
 */
async function started(live: Live, m: Claimed, step: () => Promise<AttemptResult>): Promise<void> {
  if (!(await live.starts.submit(m.id))) {
    live.log.warn(messageIds(m), 'the lease of a message ran out before its send started; not sent here');
    return;
  }
  const result = await step();
  const outcome = { message: m, result: { ...result, transition: countedAtStart(result.transition) } };
  const kept = {
    db: live.db,
    log: live.log,
    workerId: live.worker.workerId,
    leaseSeconds: live.leaseSeconds,
    onKept: (result: 'written' | 'lost') => live.hooks.emit('keptOutcome', { result }),
  };
  await writeKept(kept, m, () => live.worker.record(outcome));
}

function fire(live: Live, booked: Booked, slotMs: number): Promise<void> {
  const { m, account } = booked;
  // Its account was just marked unusable here: back to the queue.
  if (live.held.blocked.has(account.id)) return putBack(live, m);
  // Its account is paused after a maintenance refusal: back to the queue until the pause ends.
  const pausedUntil = live.held.paused.get(account.id) ?? 0;
  if (pausedUntil > Date.now()) return putBack(live, m, pausedUntil);
  // Booked at a pace the number has since refused (130429): back to the queue, booked again at the
  // lowered one, instead of meeting the same refusal at the old pace and using an attempt. Put back
  // only once the refusal's outcome is written: outcome batches commit side by side, and a send
  // back in the queue before the lowered pace would be claimed and booked at the old one again.
  const slowed = live.held.slowed.get(account.id);
  if (slowed && slowed.atMs >= booked.bookedAtMs) return slowed.lowered.then(() => putBack(live, m));
  if (Date.now() - slotMs > MAX_LATE_MS) return rebook(live, booked);
  let outcomeWritten = () => {};
  return started(live, m, async () => {
    const { outcome, route } = await sendRouted(live, booked);
    const timing = { retryTimeScale: live.retryTimeScale, confirmWaitMs: live.confirmWaitMs };
    const result = recordAttempt(m, outcome, new Date(), timing, route);
    // The sends this process booked for the account stop at once (the database's schedule, which
    // every worker books from, is paused with the outcome).
    if (result.verdict?.action === 'retry' && result.verdict.pausesAccount)
      live.held.paused.set(account.id, Date.now() + live.maintenancePauseMs);
    // Likewise its sends booked at the pace the number refused (the pace itself is lowered with the outcome).
    if (result.verdict?.action === 'retry' && result.verdict.slowsAccount) {
      const lowered = new Promise<void>((resolve) => (outcomeWritten = resolve));
      live.held.slowed.set(account.id, { atMs: Date.now(), lowered });
    }
    return result;
  })
    .catch((err: unknown) =>
      live.log.error({ err, ...messageIds(m) }, 'starting a send failed; not sent, its lease will expire'),
    )
    .finally(() => outcomeWritten());
}

/**
 * Sends over the booked route (decision 0038). A Marketing Messages API refusal for an account not
 * onboarded there (131055) sent nothing: the account is held on /messages for a while (every
 * worker), and the message goes over /messages in the same attempt.
 */
async function sendRouted(live: Live, booked: Booked): Promise<{ outcome: SendOutcome; route: ProviderRoute }> {
  const { m, account } = booked;
  const limits = { startBy: startByMs(live, booked) };
  const send = (route: ProviderRoute) =>
    live.provider.send(
      { phoneNumberId: account.phoneNumberId!, accessToken: account.accessToken!, accountId: account.id },
      m.recipient,
      m.content,
      m.id,
      m.providerMedia,
      m.replyTarget?.providerMessageId ?? null,
      route,
      limits,
    );
  const route = booked.route ?? 'messages';
  const outcome = await send(route);
  if (route !== 'marketing_messages' || !notOnboarded(outcome)) return { outcome, route };
  live.log.warn(
    { ...messageIds(m) },
    'the provider refused the Marketing Messages API for this account (131055, not onboarded): /messages carries its marketing templates for now',
  );
  await holdMarketingRoute(live.db, account).catch((err: unknown) =>
    live.log.warn({ err, accountId: account.id }, 'recording the Marketing Messages API refusal failed'),
  );
  return { outcome: await send('messages'), route: 'messages' };
}

/**
 * Runs a message's media step in the background; its outcome (media ready: due again at once,
 * or failed, or a retry) is recorded like a send's.
 */
function prepareMedia(live: Live, m: Claimed, account: SendAccount) {
  const done = live.worker.begin();
  live.mediaSteps++;
  // The media step counts as the attempt's start too (it calls the provider): one that stops the
  // worker has used an attempt; one that ends ready or unavailable gives it back (the send counts).
  void started(live, m, () => live.media.prepare(m, account))
    .catch((err: unknown) =>
      live.log.error(
        { err, ...messageIds(m) },
        'the media step failed; the lease will expire and the message be retried',
      ),
    )
    .finally(() => {
      live.mediaSteps--;
      done();
    });
}

/**
 * A late send is booked again, still under its claim: the late ones of one event-loop turn (a
 * busy loop makes many timers late at once) reserve fresh slots together, in one statement per
 * batch instead of a put-back and a claim per message. A send with no room left in its lease, or
 * whose account's schedule is full, goes back to the queue. Resolves once it is booked or back.
 */
function rebook(live: Live, booked: Booked): Promise<void> {
  return new Promise((settle) => {
    live.late.push({ ...booked, settle });
    if (live.late.length === 1) setImmediate(() => void rebookLate(live));
  });
}

async function rebookLate(live: Live): Promise<void> {
  const batch = live.late;
  live.late = [];
  // Shutdown: not sent; the lease is released with the others.
  if (live.held.stopping) return batch.forEach((b) => b.settle());
  const now = Date.now();
  const horizonMs = Math.min(...batch.map((b) => b.deadlineMs)) - now - REBOOK_SPAN_MS;
  const byAccount = new Map<string, typeof batch>();
  for (const b of batch) byAccount.set(b.account.id, [...(byAccount.get(b.account.id) ?? []), b]);
  let reservations = new Map<string, Reservation>();
  if (horizonMs > 0)
    reservations = await reserveSlots(
      live.db,
      [...byAccount].map(([accountId, bs]) => {
        const mps = pacedMps(bs[0]!.account);
        return { accountId, count: Math.min(bs.length, Math.max(1, Math.floor(mps))), mps };
      }),
      horizonMs,
      live.dbClock,
    ).catch((err: unknown) => {
      live.log.warn({ err }, 'booking late sends again failed; they go back to the queue');
      return new Map<string, Reservation>();
    });
  let rebooked = 0;
  const back: Promise<void>[] = [];
  for (const [accountId, bs] of byAccount) {
    const r = reservations.get(accountId);
    bs.forEach((b, i) => {
      if (r && i < r.count && !live.held.stopping) {
        rebooked++;
        sendAt(live, b, r.startMs + i * r.intervalMs);
      } else back.push(putBack(live, b.m));
    });
  }
  live.log.debug({ rebooked, returned: back.length }, 'late sends booked again');
  if (rebooked > 0) live.hooks.emit('lateSends', { outcome: 'rebooked', count: rebooked });
  if (back.length > 0) live.hooks.emit('lateSends', { outcome: 'returned', count: back.length });
  batch.forEach((b) => b.settle());
  await Promise.all(back);
}
