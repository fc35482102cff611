// A client process that streams bodies over a limit and reports what it could read, one JSON line
// per request. It runs apart from the server on purpose: in one process the event loop orders the
// server's close after the client has read the answer, and the broken pipe real clients see does
// not show. Usage: node --import tsx oversized-client.ts <json: {url, key, rounds}>
import http from 'node:http';
import { Readable } from 'node:stream';

import { Agent, fetch, request } from 'undici';

type Outcome = { client: string; status?: number; error?: string; connection?: string | null; code?: string };

const { url, key, rounds } = JSON.parse(process.argv[2]!) as { url: string; key: string; rounds: number };
const MB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

/** A multipart body with one file of `size` bytes, produced as the socket takes it. */
function* multipart(size: number): Generator<Buffer> {
  yield Buffer.from(
    '--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n',
  );
  for (let sent = 0; sent < size; sent += CHUNK.length) yield CHUNK.subarray(0, Math.min(CHUNK.length, size - sent));
  yield Buffer.from('\r\n--xyz--\r\n');
}
/** A JSON document of about `size` bytes. */
function* json(size: number): Generator<Buffer> {
  yield Buffer.from('{"externalId":"big","pad":"');
  for (let sent = 0; sent < size; sent += CHUNK.length) yield CHUNK.subarray(0, Math.min(CHUNK.length, size - sent));
  yield Buffer.from('"}');
}
/** A web stream that takes one part per pull (and simply stops when the client cancels it). */
const pullStream = (parts: Generator<Buffer>) =>
  new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = parts.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
const lengthOf = (parts: Iterable<Buffer>) => [...parts].reduce((n, b) => n + b.length, 0);

type Body = { path: string; type: string; parts: () => Generator<Buffer> };
const upload: Body = {
  path: '/media',
  type: 'multipart/form-data; boundary=xyz',
  parts: () => multipart(25 * MB),
};
const jsonBody: Body = { path: '/messages', type: 'application/json', parts: () => json(1.5 * MB) };

const codeOf = (err: unknown) => {
  const e = err as { code?: string; cause?: { code?: string }; message?: string };
  return e.cause?.code ?? e.code ?? e.message ?? String(err);
};

async function viaFetch(body: Body, withLength: boolean): Promise<Outcome> {
  const client = `fetch ${body.path}${withLength ? '' : ' chunked'}`;
  const headers: Record<string, string> = { 'x-api-key': key, 'content-type': body.type };
  if (withLength) headers['content-length'] = String(lengthOf(body.parts()));
  try {
    const res = await fetch(`${url}${body.path}`, {
      method: 'POST',
      headers,
      body: pullStream(body.parts()),
      duplex: 'half',
    });
    const answer = (await res.json()) as { error?: string };
    return { client, status: res.status, error: answer.error, connection: res.headers.get('connection') };
  } catch (err) {
    return { client, code: codeOf(err) };
  }
}

async function viaUndiciRequest(body: Body, agent: Agent): Promise<Outcome> {
  const client = `undici.request ${body.path}`;
  try {
    const res = await request(`${url}${body.path}`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'x-api-key': key, 'content-type': body.type, 'content-length': String(lengthOf(body.parts())) },
      body: Readable.from(body.parts()),
    });
    const answer = (await res.body.json()) as { error?: string };
    return { client, status: res.statusCode, error: answer.error, connection: String(res.headers.connection ?? '') };
  } catch (err) {
    return { client, code: codeOf(err) };
  }
}

function viaHttp(body: Body, agent: http.Agent): Promise<Outcome> {
  const client = `http keep-alive ${body.path}`;
  return new Promise((resolve) => {
    const req = http.request(
      `${url}${body.path}`,
      {
        method: 'POST',
        agent,
        headers: { 'x-api-key': key, 'content-type': body.type, 'content-length': lengthOf(body.parts()) },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('error', (err) => resolve({ client, code: codeOf(err) }));
        res.on('end', () =>
          resolve({
            client,
            status: res.statusCode,
            error: (JSON.parse(text) as { error?: string }).error,
            connection: res.headers.connection ?? null,
          }),
        );
      },
    );
    req.on('error', (err) => resolve({ client, code: codeOf(err) }));
    Readable.from(body.parts()).pipe(req);
  });
}

const httpAgent = new http.Agent({ keepAlive: true });
const undiciAgent = new Agent({ keepAliveTimeout: 10_000 });
for (let round = 0; round < rounds; round++) {
  for (const body of [upload, jsonBody]) {
    for (const outcome of [
      await viaFetch(body, true),
      await viaFetch(body, false),
      await viaUndiciRequest(body, undiciAgent),
      await viaHttp(body, httpAgent),
    ])
      console.log(JSON.stringify(outcome));
  }
}
httpAgent.destroy();
await undiciAgent.close();
