// Claimed deliveries wait here per endpoint until one of its few request slots frees up, so a
// slow or dead endpoint holds at most `concurrency` requests of this process and never the others.
import type { ClaimedDelivery } from '../lifecycle/record-deliveries.js';
import type { Endpoint } from './delivery-store.js';

export type EndpointQueues = ReturnType<typeof createEndpointQueues>;

export function createEndpointQueues(opts: {
  /** Requests in flight to one endpoint; a backlog of four times this is full. */
  concurrency: number;
  /** Counts a request in flight (see LeasedWorker.begin). */
  begin: () => () => void;
  /** Sends one delivery and records its outcome; never rejects. */
  send: (d: ClaimedDelivery, endpoint: Endpoint) => Promise<void>;
}) {
  const busy = new Map<string, number>(); // endpoint id → requests in flight in this process
  const queues = new Map<string, { endpoint: Endpoint; waiting: ClaimedDelivery[] }>();
  const backlog = (id: string) => (busy.get(id) ?? 0) + (queues.get(id)?.waiting.length ?? 0);
  const capacity = opts.concurrency * 4;
  const isFull = (id: string) => backlog(id) >= capacity;

  const full = () => [...queues.keys()].filter(isFull);
  /**
   * Room left for each endpoint with deliveries here (for the claim: none claimed beyond it), and
   * its request slots free now (a delivery pushed into one starts at the next pump).
   */
  const rooms = () =>
    [...queues.keys()].map((endpointId) => ({
      endpointId,
      room: Math.max(0, capacity - backlog(endpointId)),
      slots: Math.max(0, opts.concurrency - backlog(endpointId)),
    }));

  function pump(endpointId: string) {
    const q = queues.get(endpointId);
    if (!q) return;
    while (q.waiting.length > 0 && (busy.get(endpointId) ?? 0) < opts.concurrency)
      start(q.waiting.shift()!, q.endpoint);
    if (q.waiting.length === 0 && (busy.get(endpointId) ?? 0) === 0) queues.delete(endpointId);
  }

  function start(d: ClaimedDelivery, endpoint: Endpoint) {
    const done = opts.begin();
    busy.set(endpoint.id, (busy.get(endpoint.id) ?? 0) + 1);
    void opts.send(d, endpoint).finally(() => {
      busy.set(endpoint.id, (busy.get(endpoint.id) ?? 1) - 1);
      pump(endpoint.id);
      done();
    });
  }

  return {
    isFull,
    /** Endpoints whose backlog is full: not claimed for, so a slow one cannot fill the batch. */
    full,
    /** The backlog one endpoint can take while none of its deliveries is here. */
    capacity,
    rooms,
    /**
     * Request slots free now per endpoint with deliveries here, and for any other: what a delivery
     * handed over at its insert may take (events/local-delivery.ts).
     */
    freeSlots() {
      const r = rooms();
      return { endpointIds: r.map((x) => x.endpointId), slots: r.map((x) => x.slots), otherwise: opts.concurrency };
    },
    /** What a claim may take for this process's queues (see claimDueDeliveries). */
    claimLimits() {
      return { excludedEndpointIds: full(), rooms: rooms(), defaultRoom: capacity, defaultSlots: opts.concurrency };
    },
    /** Deliveries claimed and waiting for a slot. */
    waiting: () => [...queues.values()].reduce((n, q) => n + q.waiting.length, 0),
    push(d: ClaimedDelivery, endpoint: Endpoint) {
      const q = queues.get(endpoint.id) ?? { endpoint, waiting: [] };
      q.endpoint = endpoint; // the row just read: a URL change or a rotation applies from now on
      q.waiting.push(d);
      queues.set(endpoint.id, q);
    },
    pumpAll() {
      for (const id of queues.keys()) pump(id);
    },
    /** Drops every waiting delivery (shutdown: their leases are released). */
    clear() {
      for (const q of queues.values()) q.waiting.length = 0;
    },
  };
}
