// Every request that acts on a message logs the message id, customer id and account id as fields.
import { Writable } from 'node:stream';

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type App, createApp } from '../src/app.js';
import {
  call,
  createTenant,
  createTestDatabase,
  testConfig,
  type TestDatabase,
  textMessage,
} from './support/harness.js';

describe('request log lines', () => {
  const lines: Record<string, unknown>[] = [];
  let database: TestDatabase;
  let app: App;
  let url: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n'))
          if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    app = await createApp(testConfig({ LOG_LEVEL: 'info' }), {
      db: database.db,
      role: 'api',
      log: pino({ level: 'info' }, sink),
    });
    url = (await app.start())!;
  });
  afterAll(async () => {
    await app.stop();
    await database.drop();
  });

  it('carries messageId, customerId and accountId on a send and a read', async () => {
    const t = await createTenant(url);
    const sent = await call(url, 'POST', '/messages', { key: t.sandboxKey, body: textMessage('log-1') });
    expect(sent.status).toBe(201);
    const id = sent.body.messageId as string;
    expect((await call(url, 'GET', `/messages/${id}`, { key: t.sandboxKey })).status).toBe(200);
    const requests = lines.filter((l) => l.msg === 'request' && String(l.url).startsWith('/messages'));
    expect(requests).toHaveLength(2);
    for (const l of requests)
      expect(l).toMatchObject({ messageId: id, customerId: t.customerId, accountId: t.accountId });
  });
});
