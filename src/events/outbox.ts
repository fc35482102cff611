// The transactional outbox's vocabulary: an event as its writers give it, the envelope a receiver
// gets, the deliverer's wake-up channel. Events and their delivery rows are written by the
// lifecycle, the ledger's one writer (lifecycle/write-events.ts).
import crypto from 'node:crypto';

import type { EventType } from '../shared/vocab.js';

export type OutboxEvent = {
  customerId: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: Date;
  /**
   * An event of sandbox data (a sandbox message's status). Sandbox endpoints (created with a
   * sandbox key) get only these; live endpoints get every event, as before (decision 0024-sandbox-keys).
   */
  sandbox?: boolean;
  /**
   * The account a usage counter step counts for: set on a message.status event that is a counted
   * step of a live message (lifecycle/usage-rollup.ts adds such events to usage_daily, decision 0078).
   */
  usageAccountId?: string | null;
};

export const DELIVERIES_READY = 'chatgate_deliveries_ready';

export const newEventId = () => `evt_${crypto.randomUUID()}`;

/** The spec's envelope, exactly as a receiver gets it (and as it is signed). */
export function envelopeJson(id: string, type: string, createdAt: Date, data: unknown): string {
  return JSON.stringify({ eventId: id, type, createdAt: createdAt.toISOString(), data });
}
