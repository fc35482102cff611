// A deliverer in this process that takes a delivery at its insert (decision 0079). The outbox
// (lifecycle/write-events.ts) writes such a delivery already leased to it, its first attempt
// counted, and hands it over once the transaction commits: the POST starts without the claim's
// row write and round trip. Only as many as the endpoint has request slots free are taken; the
// rest are written as before and claimed. Registered per database (`Db.context`), so two services
// in one process never hand each other work; an API-only process has none.
import type { Db, Queryable } from '../db/db.js';

/** A delivery written leased to this process's deliverer, as it hands it over. */
export type HandedDelivery = { id: string; endpointId: string; eventId: string; eventType: string; payload: string };

export type LocalDeliverer = {
  /** The lease holder the rows are written with (the deliverer's worker id). */
  holder: string;
  leaseSeconds: number;
  /** Request slots free now, per endpoint with work here, and for any other endpoint. */
  freeSlots(): { endpointIds: string[]; slots: number[]; otherwise: number };
  /** Takes the deliveries of a committed transaction (queues and POSTs them; never throws). */
  take(deliveries: HandedDelivery[]): void;
};

const KEY = Symbol('chatgate.localDeliverer');

/** Registers (or, with null, removes) the deliverer that takes this database's new deliveries here. */
export function setLocalDeliverer(db: Pick<Db, 'context'>, deliverer: LocalDeliverer | null): void {
  if (deliverer) db.context.set(KEY, deliverer);
  else db.context.delete(KEY);
}

/** The deliverer a transaction's new deliveries can be handed to, if any (only inside `Db.transaction`). */
export function localDeliverer(tx: Queryable): LocalDeliverer | null {
  if (!tx.afterCommit || !tx.context) return null;
  return (tx.context.get(KEY) as LocalDeliverer | undefined) ?? null;
}
