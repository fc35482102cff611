// The tests' clock itself (test/support/test-clock.ts, decision 0071): `advance` moves the test
// process's Date and the database's now() by the same step, on each backend, once (PGlite on the
// test's thread reads the time from Date: the step must not count twice there).
import fs from 'node:fs';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { createTestDatabase, type TestDatabase } from './support/harness.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ clock: true });
});
afterAll(() => database.drop());

/** The machine's time, from the monotonic clock (the test clock does not move it). */
const machineNow = () => performance.timeOrigin + performance.now();
const databaseNow = async () =>
  Number((await database.db.query<{ ms: number }>('SELECT extract(epoch FROM now()) * 1000 AS ms'))[0]!.ms);

it('moves Date and the database’s now() forward together, by the step given, and only forward', async () => {
  const clock = database.clock!;
  // A busy machine's slack: seconds, against steps of hours.
  const SLACK = 5_000;
  expect(Math.abs(Date.now() - machineNow())).toBeLessThan(SLACK);
  expect(Math.abs((await databaseNow()) - machineNow())).toBeLessThan(SLACK);

  await clock.advance(3600_000);
  await clock.advance(1800_000);
  expect(clock.offsetMs).toBe(5400_000);
  expect(Math.abs(Date.now() - machineNow() - 5400_000)).toBeLessThan(SLACK);
  expect(Math.abs(new Date().getTime() - machineNow() - 5400_000)).toBeLessThan(SLACK);
  expect(Math.abs((await databaseNow()) - machineNow() - 5400_000)).toBeLessThan(SLACK);
  await expect(clock.advance(-1)).rejects.toThrow(/only moves forward/);

  // Dates are ordinary Dates, those made before and outside the clock included.
  expect(new Date(0).toISOString()).toBe('1970-01-01T00:00:00.000Z');
  expect(new Date()).toBeInstanceOf(Date);
  expect(fs.statSync('.').mtime).toBeInstanceOf(Date);
  expect(Date.parse('2026-01-01T00:00:00Z')).toBe(Date.UTC(2026, 0, 1));
});
