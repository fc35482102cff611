// The tests' clock (decision 0071): moves the service's "now" forward at once, instead of a test
// waiting out a product timer (a media file's hour unused, a message's lifetime, a lease, a
// retention). The service's code is not touched and has no setting for it: the clock is moved
// under it, in the two places it reads the time.
// - In the test's process, `Date` (Date.now(), new Date()) runs `offsetMs` ahead of the machine's,
//   for the test and every service it started in-process alike, as one machine's clock would.
//   Timers (setTimeout) and the monotonic clock (performance.now) are left alone: a worker asleep
//   until its next poll sleeps on; wake it as the service would (a NOTIFY) or wait for its poll.
// - In the database, `now()` is the clock schema's: a function that adds the same offset to
//   pg_catalog.now(), found before pg_catalog's on the database's search_path (PGlite on the
//   test's thread reads the time from the process's `Date`, so it moves without the offset). Every statement
//   that calls now() follows, in the product's SQL and in its plpgsql functions alike. Column
//   defaults (`DEFAULT now()`) were bound to pg_catalog.now() when the migrations ran, so a row
//   inserted without the column keeps the machine's time; `CURRENT_TIMESTAMP` is not moved either
//   (the product uses neither for a timer).
// The clock only moves forward, and a file has one: a child process (a CLI, a worker process) does
// not see the test's `Date` (use test/support/skewed-clock.mjs there) but does see the database's.
import type pg from 'pg';

import type { Db } from '../../src/db/db.js';

export const CLOCK_SCHEMA = 'chatgate_test_clock';
/** `public` first, so anything created unqualified still lands there; then the clock's now(). */
export const CLOCK_SEARCH_PATH = `public, ${CLOCK_SCHEMA}, pg_catalog`;

/** Makes the clock's schema in the database they run in (its offset 0), one statement each. */
export const CLOCK_SQL = [
  `CREATE SCHEMA IF NOT EXISTS ${CLOCK_SCHEMA}`,
  `CREATE TABLE IF NOT EXISTS ${CLOCK_SCHEMA}.state (offset_ms float8 NOT NULL)`,
  `INSERT INTO ${CLOCK_SCHEMA}.state SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM ${CLOCK_SCHEMA}.state)`,
  `CREATE OR REPLACE FUNCTION ${CLOCK_SCHEMA}.now() RETURNS timestamptz LANGUAGE sql STABLE AS
    $$ SELECT pg_catalog.now() + (SELECT offset_ms FROM ${CLOCK_SCHEMA}.state) * interval '1 millisecond' $$`,
];

export type TestClock = {
  /** How far ahead of the machine's clock the service's is, in milliseconds. */
  readonly offsetMs: number;
  /** Moves the service's clock (the process's `Date` and the database's now()) `ms` forward. */
  advance(ms: number): Promise<void>;
};

let offsetMs = 0;

/** `Date` as the machine's plus the offset; its instances are ordinary `Date`s. */
function moveProcessClock(): void {
  const RealDate = globalThis.Date as DateConstructor & { testClock?: true };
  if (RealDate.testClock) return;
  const now = () => RealDate.now() + offsetMs;
  globalThis.Date = new Proxy(RealDate, {
    construct: (target, args: unknown[], newTarget) =>
      Reflect.construct(target, (args.length === 0 ? [now()] : args) as [number], newTarget),
    apply: () => new RealDate(now()).toString(),
    get: (target, prop, receiver: unknown) =>
      prop === 'now' ? now : prop === 'testClock' ? true : Reflect.get(target, prop, receiver),
  });
}

/** On PostgreSQL, before the database's pool opens: its clock schema, and its search_path. */
export async function installClockPostgres(database: pg.Client, admin: pg.Client, name: string): Promise<void> {
  for (const sql of CLOCK_SQL) await database.query(sql);
  await admin.query(`ALTER DATABASE ${name} SET search_path TO ${CLOCK_SEARCH_PATH}`);
}

/** On PGlite (one session): the clock schema, and the session's search_path. */
export async function installClockPglite(db: Db): Promise<void> {
  for (const sql of CLOCK_SQL) await db.query(sql);
  await db.query(`SET search_path TO ${CLOCK_SEARCH_PATH}`);
}

/**
 * The clock of a database made with `createTestDatabase({ clock: true })`. `followsProcess`: the
 * database reads the time from this process's `Date` (PGlite on the test's thread: its
 * WebAssembly asks JavaScript), so its now() moves with it and the clock schema's offset stays 0.
 */
export function testClock(db: Db, followsProcess: boolean): TestClock {
  moveProcessClock();
  return {
    get offsetMs() {
      return offsetMs;
    },
    async advance(ms: number) {
      if (!(ms >= 0)) throw new Error('the test clock only moves forward');
      offsetMs += ms;
      if (!followsProcess) await db.query(`UPDATE ${CLOCK_SCHEMA}.state SET offset_ms = $1`, [offsetMs]);
    },
  };
}
