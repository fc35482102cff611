// The embedded database's own thread (EMBEDDED_DB_THREAD, decision 0058): it owns the PGlite
// instance and answers the main thread's requests (pglite-thread.ts), one message each. It imports
// nothing of the service's own but types, so that Node loads it as it is: compiled, or as
// TypeScript (tests and `npm run dev`, through Node's type stripping).
import { parentPort, workerData } from 'node:worker_threads';

import { PGlite, type Transaction } from '@electric-sql/pglite';

/** `from`: a dumped data folder's bytes, opened instead of a new database (in memory only). */
export type WorkerData = { dataDir: string | null; startParams: string[]; from?: ArrayBuffer };

/** `tx`: the id of the `begin` request whose transaction runs the statement; null outside one. */
export type Request =
  | { id: number; op: 'query'; tx: number | null; text: string; params?: readonly unknown[] }
  | { id: number; op: 'exec'; tx: number | null; text: string }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'listen'; channel: string }
  | { id: number; op: 'unlisten'; listen: number }
  | { id: number; op: 'close' };

/** An error's message and its fields (PostgreSQL's `code`, `constraint`, …): clone keeps no own fields. */
export type SerializedError = { message: string; stack?: string; fields: Record<string, string | number | boolean> };

/** Id 0 answers the start; `notify` carries the id of the `listen` request it belongs to. */
export type Reply =
  | { id: number; ok: true; value?: unknown }
  | { id: number; ok: false; error: SerializedError }
  | { notify: number; payload: string };

type Open = { tx: Transaction; end: (commit: boolean) => void; done: Promise<void> };

const port = parentPort!;
const ROLLBACK = Symbol('rollback');
const open = new Map<number, Open>();
const listens = new Map<number, () => Promise<void>>();

function serialize(err: unknown): SerializedError {
  if (!(err instanceof Error)) return { message: String(err), fields: {} };
  const fields: SerializedError['fields'] = {};
  for (const [key, value] of Object.entries(err))
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  return { message: err.message, stack: err.stack, fields };
}

/**
 * PGlite's own transaction, held open until the main thread ends it: statements outside it wait
 * on PGlite's mutex meanwhile, as they do when PGlite runs on the main thread. Resolves once it has
 * begun; a failed BEGIN rejects.
 */
function begin(pg: PGlite, id: number): Promise<void> {
  let end!: (commit: boolean) => void;
  const ended = new Promise<boolean>((resolve) => (end = resolve));
  return new Promise((started, failed) => {
    const done: Promise<void> = pg
      .transaction(async (tx) => {
        open.set(id, { tx, end, done });
        started();
        // Thrown so that PGlite rolls back; caught below.
        if (!(await ended)) throw ROLLBACK;
      })
      .catch((err: unknown) => {
        if (err !== ROLLBACK) throw err;
      });
    done.catch(failed);
  });
}

function connection(pg: PGlite, tx: number | null): Pick<PGlite, 'query' | 'exec'> {
  if (tx === null) return pg;
  const t = open.get(tx);
  if (!t) throw new Error(`no open transaction ${tx}`);
  return t.tx;
}

async function handle(pg: PGlite, req: Request): Promise<unknown> {
  switch (req.op) {
    case 'query':
      return (await connection(pg, req.tx).query(req.text, req.params as unknown[] | undefined)).rows;
    case 'exec':
      await connection(pg, req.tx).exec(req.text);
      return undefined;
    case 'begin':
      return begin(pg, req.id);
    case 'end': {
      const t = open.get(req.tx);
      if (!t) throw new Error(`no open transaction ${req.tx}`);
      open.delete(req.tx);
      t.end(req.commit);
      return t.done;
    }
    case 'listen':
      listens.set(
        req.id,
        await pg.listen(req.channel, (payload) => port.postMessage({ notify: req.id, payload } satisfies Reply)),
      );
      return undefined;
    case 'unlisten':
      await listens.get(req.listen)?.();
      listens.delete(req.listen);
      return undefined;
    case 'close':
      // The main thread ends the thread once answered.
      await pg.close();
      return undefined;
  }
}

/** A result that cannot be cloned fails its own call, not the thread. */
function answer(reply: Reply & { id: number }): void {
  try {
    port.postMessage(reply);
  } catch (err) {
    port.postMessage({ id: reply.id, ok: false, error: serialize(err) } satisfies Reply);
  }
}

async function main(): Promise<void> {
  const { dataDir, startParams, from } = workerData as WorkerData;
  let pg: PGlite;
  try {
    pg = await PGlite.create(dataDir ?? undefined, {
      startParams,
      ...(from ? { loadDataDir: new Blob([from]) } : {}),
    });
  } catch (err) {
    port.postMessage({ id: 0, ok: false, error: serialize(err) } satisfies Reply);
    return;
  }
  port.on('message', (req: Request) => {
    handle(pg, req).then(
      (value) => answer({ id: req.id, ok: true, value }),
      (err: unknown) => answer({ id: req.id, ok: false, error: serialize(err) }),
    );
  });
  port.postMessage({ id: 0, ok: true } satisfies Reply);
}

void main();
