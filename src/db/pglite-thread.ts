// PGlite in a worker thread of its own (EMBEDDED_DB_THREAD, decision 0058): the database's
// WebAssembly work leaves the core that serves HTTP. Each call is a message to the thread
// (pglite-worker.ts), which owns the instance; results come back by structured clone, which keeps
// what PGlite returns (Date, numbers, parsed json, Uint8Array) as it is.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import type { Queryable } from './db.js';
import type { PgliteConnection } from './pglite-db.js';
import type { Reply, Request, SerializedError, WorkerData } from './pglite-worker.js';

type Pending = { resolve(value: unknown): void; reject(err: Error): void };
type Call = { [Op in Request['op']]: Omit<Extract<Request, { op: Op }>, 'id'> }[Request['op']];

/** The worker's file beside this one: `.js` once built, `.ts` when run from source. */
const workerUrl = () => new URL(`./pglite-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/** The thread's error as the caller's: its message and PostgreSQL fields (`code`, `constraint`, …). */
function revive(e: SerializedError): Error {
  const err = Object.assign(new Error(e.message), e.fields);
  if (e.stack !== undefined) err.stack = e.stack;
  return err;
}

/**
 * Requests to the thread and their answers by id. The thread keeps the process alive only while an
 * answer is awaited, as PGlite's own work on the main thread does; once it has died, every call fails.
 */
function connect(worker: Worker) {
  const pending = new Map<number, Pending>();
  const listeners = new Map<number, (payload: string) => void>();
  let nextId = 1;
  let gone: Error | null = null;
  const fail = (err: Error) => {
    gone ??= err;
    for (const p of pending.values()) p.reject(gone);
    pending.clear();
  };
  worker.on('message', (m: Reply) => {
    if ('notify' in m) return void listeners.get(m.notify)?.(m.payload);
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (pending.size === 0) worker.unref();
    if (m.ok) p.resolve(m.value);
    else p.reject(revive(m.error));
  });
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the embedded database's thread exited (code ${code})`)));
  const send = (id: number, req: Call): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (gone) return reject(gone);
      try {
        worker.postMessage({ ...req, id });
      } catch (err) {
        return reject(err as Error);
      }
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
    });
  const started = new Promise<unknown>((resolve, reject) => pending.set(0, { resolve, reject }));
  return {
    started,
    listeners,
    isGone: () => gone !== null,
    nextId: () => nextId++,
    send,
    call: (req: Call) => send(nextId++, req),
  };
}

/** Starts the thread and opens the database in it; rejects if PGlite does not open. */
export async function openPgliteThread(
  dataDir: string | null,
  startParams: string[],
  from?: Blob,
): Promise<PgliteConnection> {
  const data: WorkerData = { dataDir, startParams, ...(from ? { from: await from.arrayBuffer() } : {}) };
  const worker = new Worker(workerUrl(), { workerData: data });
  const { started, listeners, isGone, nextId, send, call } = connect(worker);
  try {
    await started;
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  const on = (tx: number | null): Queryable => ({
    async query<T>(text: string, params?: readonly unknown[]) {
      return (await call({ op: 'query', tx, text, params })) as T[];
    },
    async exec(text: string) {
      await call({ op: 'exec', tx, text });
    },
  });
  return {
    ...on(null),
    async transaction(fn) {
      const tx = nextId();
      await send(tx, { op: 'begin' });
      let result;
      try {
        result = await fn(on(tx));
      } catch (err) {
        await call({ op: 'end', tx, commit: false }).catch(() => {});
        throw err;
      }
      await call({ op: 'end', tx, commit: true });
      return result;
    },
    async listen(channel, onPayload) {
      const id = nextId();
      listeners.set(id, onPayload);
      try {
        await send(id, { op: 'listen', channel });
      } catch (err) {
        listeners.delete(id);
        throw err;
      }
      return async () => {
        listeners.delete(id);
        // After close, nothing is left to unsubscribe from.
        if (!isGone()) await call({ op: 'unlisten', listen: id });
      };
    },
    async close() {
      try {
        await call({ op: 'close' });
      } finally {
        await worker.terminate();
      }
    },
  };
}
