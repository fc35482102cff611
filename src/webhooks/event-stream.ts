// GET /events/stream (decision 0072): a customer's events, live, for development (`chatgate listen`).
// Who may listen is this service's rule: a key not scoped to one account (as for webhooks); live
// keys on plans with webhooks (Basic, Pro); sandbox keys on every plan, since they only ever see
// sandbox data. A stream reads the outbox's `events` after its cursor by a short poll (the outbox
// wakes only webhook deliveries, and only when an event has one), is bounded (a limit per
// customer across processes, a heartbeat, a deadline) and resumes after Last-Event-ID.
import type { Logger } from 'pino';

import { type Caller, requirePlan, requireUnscoped } from '../auth/caller.js';
import type { Db } from '../db/db.js';
import { errors } from '../shared/errors.js';
import {
  cursorOf,
  dropLease,
  eventsAfter,
  renewLease,
  startCursor,
  type StreamCursor,
  type StreamedEvent,
  takeLease,
} from './event-stream-store.js';

export type { StreamedEvent } from './event-stream-store.js';

export const STREAM_LIMITS = {
  /** Open streams per customer, live and sandbox together, on all API processes. */
  perCustomer: 3,
  /** How often a stream looks for new events. */
  pollMs: 1000,
  /** An event is streamed once it is this old (its transaction has committed): see eventsAfter. */
  settleMs: 1000,
  /** A comment line this often keeps proxies from closing an idle stream; it renews the lease. */
  heartbeatMs: 15_000,
  /** The stream ends after this long; a client reconnects with Last-Event-ID (chatgate listen does). */
  deadlineMs: 60 * 60 * 1000,
  /** Events per read; a full page is followed at once by the next. */
  page: 100,
} as const;

export type StreamLimits = { [K in keyof typeof STREAM_LIMITS]: number };

/** Where a stream writes: each event, each heartbeat; `closed` aborts when the client goes away. */
export type StreamSink = {
  event(e: StreamedEvent): Promise<void>;
  heartbeat(): Promise<void>;
  closed: AbortSignal;
};

export type EventStreamService = ReturnType<typeof createEventStreamService>;

export function createEventStreamService(deps: { db: Db; log: Logger; limits?: Partial<StreamLimits> }) {
  const { db, log } = deps;
  const limits: StreamLimits = { ...STREAM_LIMITS, ...deps.limits };
  /** Every open stream of this process: ended when the server stops. */
  const open = new Set<AbortController>();

  /** Checks the caller and takes a lease: what a stream needs before its answer's head is written. */
  async function open_(caller: Caller, lastEventId: string | undefined) {
    requireUnscoped(caller);
    if (!caller.principal.sandbox) requirePlan(caller, 'webhooks');
    const owner = { customerId: caller.tenant.customerId, sandbox: caller.principal.sandbox };
    let cursor: StreamCursor | null = null;
    if (lastEventId) cursor = await cursorOf(db, owner.customerId, lastEventId);
    cursor ??= await startCursor(db);
    const lease = await takeLease(db, owner, limits.perCustomer);
    if (!lease) throw errors.streamLimit(limits.perCustomer);
    return { owner, cursor, lease, resumed: lastEventId !== undefined };
  }

  type Opened = Awaited<ReturnType<typeof open_>>;

  /** Streams until the client goes, the deadline passes or the server stops; then frees the lease. */
  async function run(s: Opened, sink: StreamSink): Promise<void> {
    const stop = new AbortController();
    open.add(stop);
    const ended = AbortSignal.any([sink.closed, stop.signal, AbortSignal.timeout(limits.deadlineMs)]);
    let cursor = s.cursor;
    let lastBeat = Date.now();
    try {
      while (!ended.aborted) {
        const batch = await eventsAfter(db, s.owner, cursor, { limit: limits.page, settleMs: limits.settleMs });
        for (const e of batch) {
          if (ended.aborted) break;
          await sink.event(e);
          cursor = { createdAt: e.createdAt, id: e.id };
        }
        if (Date.now() - lastBeat >= limits.heartbeatMs && !ended.aborted) {
          lastBeat = Date.now();
          await sink.heartbeat();
          await renewLease(db, s.lease);
        }
        if (batch.length < limits.page) await pause(limits.pollMs, ended);
      }
    } catch (err) {
      if (!ended.aborted) log.warn({ err, customerId: s.owner.customerId }, 'event stream ended by an error');
    } finally {
      open.delete(stop);
      await dropLease(db, s.lease).catch((err: unknown) => log.warn({ err }, 'event stream lease not freed'));
    }
  }

  return {
    limits,
    open: open_,
    run,
    /** Ends every stream of this process (the server is stopping). */
    endAll(): void {
      for (const c of open) c.abort();
    },
  };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
