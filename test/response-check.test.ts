// Response schemas serialize the answers (undeclared fields are not sent), and the check the test
// harness turns on (src/http/response-check.ts) fails any answer serialization changed.
import { Type } from '@sinclair/typebox';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { component } from '../src/http/openapi/route-docs.js';
import { createServer, type Server } from '../src/http/server.js';

const Thing = component('Thing', Type.Object({ id: Type.String(), note: Type.Union([Type.String(), Type.Null()]) }));

async function serve(checkResponses: boolean): Promise<{ app: Server; url: string }> {
  const app = createServer({
    log: pino({ level: 'silent' }),
    bodyLimit: 1024,
    bodyReadTimeoutMs: 5000,
    headersTimeoutMs: 5000,
    keepAliveTimeoutMs: 1000,
    maxConnections: 10,
    maxConnectionsPerAddress: 0,
    checkResponses,
  });
  const schema = { response: { 200: Thing } };
  app.get('/declared', { schema }, async () => ({ id: 't1', note: null }));
  // A field the schema does not declare, and a null where it declares a string.
  app.get('/leaky', { schema }, async () => ({ id: 't1', note: null, secret: 's3cr3t' }) as never);
  app.get('/coerced', { schema: { response: { 200: Type.Object({ id: Type.String() }) } } }, async () => ({
    id: null as never,
  }));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url };
}

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
};

describe('response schemas', () => {
  let checked: { app: Server; url: string };
  let plain: { app: Server; url: string };
  beforeAll(async () => {
    checked = await serve(true);
    plain = await serve(false);
  });
  afterAll(async () => {
    await checked.app.close();
    await plain.app.close();
  });

  it('send only the fields they declare', async () => {
    expect(await get(`${plain.url}/leaky`)).toEqual({ status: 200, body: { id: 't1', note: null } });
    expect(await get(`${plain.url}/declared`)).toEqual({ status: 200, body: { id: 't1', note: null } });
  });

  it('with the check on, answer 500 naming what serialization dropped or changed', async () => {
    expect(await get(`${checked.url}/declared`)).toEqual({ status: 200, body: { id: 't1', note: null } });
    const leaky = await get(`${checked.url}/leaky`);
    expect(leaky.status).toBe(500);
    expect(leaky.body.responseCheck).toMatch(/GET \/leaky: .*\/secret: sent undefined/);
    const coerced = await get(`${checked.url}/coerced`);
    expect(coerced.status).toBe(500);
    expect(coerced.body.responseCheck).toMatch(/\/id: sent "", the handler returned null/);
  });
});
