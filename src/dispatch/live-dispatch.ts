// The live path of the dispatcher: each claimed message is refused (account state, send policy),
// sent to its media step, or booked into its account's paced slots and fired at its slot; what
// cannot go now is put back in the queue. Outcomes are recorded through the worker.
import type { Logger } from 'pino';

import { loadSendAccounts, type SendAccount } from '../accounts/send-accounts.js';
import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { applyTransitions, logChanges } from '../lifecycle/apply-transitions.js';
import type { Claimed } from '../lifecycle/claim.js';
import type { Transition } from '../lifecycle/transitions.js';
import * as transition from '../lifecycle/transitions.js';
import type { ProviderClient } from '../provider/cloud-api.js';
import type { Sealer } from '../shared/crypto.js';
import type { LeasedWorker } from '../shared/worker-loop.js';
import { recordAttempt, refuseBeforeSending } from './live-send.js';
import type { Outcome } from './outcomes.js';
import { reserveSlots } from './pacing.js';
import { type MediaPreparer, needsMediaStep } from './prepare-media.js';

/** Media steps (fetch, upload) at once in one process: each may hold a file of up to 20 MB. */
const MAX_MEDIA_STEPS = 4;
/** A message whose media step found no room waits this long before it is claimed again. */
const MEDIA_STEP_RETRY_MS = 250;

/** How late a timer may fire and still send (see sendAt). */
const MAX_LATE_MS = 25;

/** The ids every log line about a message carries. */
const messageIds = (m: Claimed) => ({ messageId: m.id, customerId: m.customerId, accountId: m.chatAccountId });

type Live = {
  db: Db;
  log: Logger;
  provider: ProviderClient;
  media: MediaPreparer;
  sealer: Sealer;
  retryTimeScale: number;
  /** How far ahead an account's send slots may be booked. */
  pacingHorizonMs: number;
  worker: Pick<LeasedWorker<Outcome>, 'workerId' | 'begin' | 'record'>;
  /** Timers of sends not fired yet, each with the end of its in-flight count: cancelled on shutdown. */
  timers: Map<NodeJS.Timeout, () => void>;
  /**
   * Accounts this process marked after an account-level error: their booked sends are not fired.
   * Reloaded on each claim (loadSendAccounts), so a reconnected account sends again.
   */
  blocked: Set<string>;
  mediaSteps: number;
};

export const earliest = (ts: Transition[]) =>
  ts.reduce<Date | null>((min, t) => (t.nextDueAt && (!min || t.nextDueAt < min) ? t.nextDueAt : min), null);

export function createLiveDispatch(deps: Omit<Live, 'timers' | 'blocked' | 'mediaSteps'>) {
  const live: Live = { ...deps, timers: new Map(), blocked: new Set(), mediaSteps: 0 };
  return {
    /** Sends or refuses each live message; returns when deferred ones become due, if any. */
    dispatch: (messages: Claimed[]) => dispatchLive(live, messages),
    /** The account was just marked unusable: its booked sends go back to the queue. */
    block: (accountId: string) => void live.blocked.add(accountId),
    /** Shutdown: booked sends not fired yet are not sent (their leases are released). */
    cancelTimers() {
      for (const [timer, done] of live.timers) {
        clearTimeout(timer);
        done();
      }
      live.timers.clear();
    },
  };
}

async function dispatchLive(live: Live, messages: Claimed[]): Promise<Date | null> {
  const now = new Date();
  const accounts = await loadSendAccounts(live.db, live.sealer, [...new Set(messages.map((m) => m.chatAccountId))]);
  for (const a of accounts.values()) if (a.status === 'CONNECTED') live.blocked.delete(a.id);
  const refused: Transition[] = [];
  const deferred: Transition[] = [];
  const byAccount = new Map<string, Claimed[]>();
  for (const m of messages) {
    const account = accounts.get(m.chatAccountId);
    const refusal = refuseBeforeSending(m, account, now);
    if (refusal) refused.push(refusal);
    else if (needsMediaStep(m)) {
      // Media are fetched and uploaded before the send is booked into the account's slots.
      if (live.mediaSteps < MAX_MEDIA_STEPS) prepareMedia(live, m, account!);
      else deferred.push(transition.wait(m, now, new Date(now.getTime() + MEDIA_STEP_RETRY_MS)));
    } else byAccount.set(m.chatAccountId, [...(byAccount.get(m.chatAccountId) ?? []), m]);
  }
  deferred.push(...(await bookSends(live, byAccount, accounts, now)));
  if (refused.length + deferred.length > 0)
    logChanges(
      live.log,
      await retryTransient(() =>
        live.db.transaction((tx) => applyTransitions(tx, live.worker.workerId, [...refused, ...deferred])),
      ),
      'refused or put back before sending',
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
  now: Date,
): Promise<Transition[]> {
  const wants = [...byAccount].map(([accountId, ms]) => {
    const mps = accounts.get(accountId)!.throughputMps;
    return { accountId, count: Math.min(ms.length, Math.max(1, mps)), mps };
  });
  const reservations = await reserveSlots(live.db, wants, live.pacingHorizonMs);
  const back: Transition[] = [];
  for (const [accountId, ms] of byAccount) {
    const r = reservations.get(accountId);
    const account = accounts.get(accountId)!;
    ms.forEach((m, i) => {
      if (r && i < r.count) sendAt(live, m, account, r.startMs + i * r.intervalMs);
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
 * slot goes back to the queue instead: a late burst could otherwise overlap another worker's
 * next slots and push one second over the account's cap.
 */
function sendAt(live: Live, m: Claimed, account: SendAccount, slotMs: number) {
  const done = live.worker.begin();
  const timer = setTimeout(
    () => {
      live.timers.delete(timer);
      void fire(live, m, account, slotMs).finally(done);
    },
    Math.max(0, slotMs - Date.now()),
  );
  live.timers.set(timer, done);
}

function fire(live: Live, m: Claimed, account: SendAccount, slotMs: number): Promise<void> {
  // Late, or its account was just marked unusable here: back to the queue (the next claim
  // fails it without a call when the account is not CONNECTED).
  if (Date.now() - slotMs > MAX_LATE_MS || live.blocked.has(account.id)) {
    const now = new Date();
    return live.worker
      .record({ message: m, result: { transition: transition.wait(m, now, now), verdict: null } })
      .catch((err: unknown) =>
        live.log.error({ err, ...messageIds(m) }, 'returning a late send to the queue failed; its lease will expire'),
      );
  }
  return live.provider
    .send(
      { phoneNumberId: account.phoneNumberId!, accessToken: account.accessToken!, accountId: account.id },
      m.recipient,
      m.content,
      m.id,
      m.providerMedia,
    )
    .then((outcome) =>
      live.worker.record({ message: m, result: recordAttempt(m, outcome, new Date(), live.retryTimeScale) }),
    )
    .catch((err: unknown) =>
      live.log.error(
        { err, ...messageIds(m) },
        'recording a send outcome failed; the lease will expire and the message be retried',
      ),
    );
}

/**
 * Runs a message's media step in the background; its outcome (media ready: due again at once,
 * or failed, or a retry) is recorded like a send's.
 */
function prepareMedia(live: Live, m: Claimed, account: SendAccount) {
  const done = live.worker.begin();
  live.mediaSteps++;
  void live.media
    .prepare(m, account)
    .then((result) => live.worker.record({ message: m, result }))
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
