// Array parameters go to PostgreSQL as array literals (src/db/postgres-db.ts): items with quotes or
// backslashes are escaped, the others (ids, timestamps: most of them) sent as they are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { backend, createTestDatabase, type TestDatabase } from './support/harness.js';

describe(`array parameters (${backend})`, () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it('come back item for item, quotes, backslashes, commas, braces and NULL included', async () => {
    const items = ['plain', 'with "quote"', 'back\\slash', '\\"', '', 'a,b', '{x}', ' spaced ', 'NULL', null];
    // Read back as JSON text: what the server holds, not how a client parses an array.
    const [row] = await database.db.query<{ a: string }>('SELECT array_to_json($1::text[])::text AS a', [items]);
    expect(JSON.parse(row!.a)).toEqual(items);
    const ids = ['6f1c2a9e-6f0b-4a4e-9a57-0d5c1f9a2b11', '0d1b7f0c-3c39-4f55-8a3e-5b1c2a9d7e44'];
    const [u] = await database.db.query<{ a: string[] }>('SELECT $1::uuid[]::text[] AS a', [ids]);
    expect(u!.a).toEqual(ids);
  });
});
