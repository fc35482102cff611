// `chatgate listen [--forward-to URL]`: reads GET /events/stream (Server-Sent Events) and prints
// each event; with --forward-to, posts it to URL signed exactly as a webhook delivery is (the same
// headers and x-svc-signature, src/webhooks/signature.ts) with a secret printed at the start, so a
// local receiver checks it as it will check the real deliveries. Reconnects with Last-Event-ID
// when the stream ends (its hour is up, the service restarted); an error answer at the start
// (no key, the plan, too many streams) ends it with that answer on one line.
import crypto from 'node:crypto';

import { requestHeaders, signatureHeader } from '../webhooks/signature.js';
import { causeOf, CommandError, errorLine, EXIT, unreachable } from './api-call.js';

export type ListenOptions = {
  baseUrl: string;
  apiKey: string;
  forwardTo?: string;
  secret?: string;
  json: boolean;
};

type SseEvent = { id: string; type: string; data: string };

/** How long a forward may take before it is reported as failed (the deliverer's own bound is alike). */
const FORWARD_TIMEOUT_MS = 10_000;
const RECONNECT_MS = 2000;

export async function listen(o: ListenOptions): Promise<number> {
  if (o.forwardTo !== undefined && !/^https?:\/\/[^\s]+$/i.test(o.forwardTo))
    throw new CommandError(`error: --forward-to must be an http(s) URL (got "${o.forwardTo}")`, EXIT.usage);
  const secret = o.secret ?? `whsec_${crypto.randomBytes(24).toString('hex')}`;
  const stop = new AbortController();
  const quit = () => stop.abort();
  process.once('SIGINT', quit);
  process.once('SIGTERM', quit);
  let lastEventId: string | undefined;
  let ready = false;
  try {
    while (!stop.signal.aborted) {
      const res = await open(o, lastEventId, stop.signal, ready);
      if (!res) break;
      if (!ready) {
        ready = true;
        console.error(
          `Ready! Listening for events at ${o.baseUrl}/events/stream` +
            (o.forwardTo ? `, forwarding to ${o.forwardTo}` : '') +
            `. Your webhook signing secret is ${secret} (Ctrl-C to quit)`,
        );
      }
      try {
        for await (const e of readEvents(res.body!)) {
          lastEventId = e.id;
          await handle(o, secret, e);
        }
      } catch (err) {
        if (!stop.signal.aborted) console.error(`listen: the stream broke (${causeOf(err)}); reconnecting`);
      }
      if (!stop.signal.aborted) await pause(RECONNECT_MS, stop.signal);
    }
  } finally {
    process.off('SIGINT', quit);
    process.off('SIGTERM', quit);
  }
  return EXIT.ok;
}

/** Opens the stream; null when stopped. Before the first success a failure ends the command; later ones are retried. */
async function open(o: ListenOptions, lastEventId: string | undefined, signal: AbortSignal, retry: boolean) {
  for (;;) {
    if (signal.aborted) return null;
    let res: Response;
    try {
      res = await fetch(`${o.baseUrl}/events/stream`, {
        headers: {
          accept: 'text/event-stream',
          'x-api-key': o.apiKey,
          ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
        },
        signal,
      });
    } catch (err) {
      if (signal.aborted) return null;
      if (!retry) throw unreachable(o.baseUrl, err);
      console.error(`listen: cannot reach ${o.baseUrl} (${causeOf(err)}); trying again`);
      await pause(RECONNECT_MS, signal);
      continue;
    }
    if (res.ok && res.body) return res;
    const line = errorLine(res.status, await res.text().catch(() => ''));
    // A 429 (too many streams: ours may still be counted) or a 5xx is worth another try once listening.
    if (retry && (res.status === 429 || res.status >= 500)) {
      console.error(`listen: ${line}; trying again`);
      await pause(RECONNECT_MS * 5, signal);
      continue;
    }
    throw new CommandError(line, EXIT.refused);
  }
}

/** Prints the event, and forwards it signed when asked. */
async function handle(o: ListenOptions, secret: string, e: SseEvent): Promise<void> {
  const at = new Date().toISOString();
  if (o.json) console.log(e.data);
  else if (!o.forwardTo) console.log(`${at}  ${e.type}  ${e.id}`);
  if (!o.forwardTo) return;
  const headers = requestHeaders({ eventType: e.type, eventId: e.id }, signatureHeader(e.data, [secret]));
  let outcome: string;
  try {
    const res = await fetch(o.forwardTo, {
      method: 'POST',
      headers,
      body: e.data,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await res.arrayBuffer().catch(() => undefined);
    outcome = `[${res.status}]`;
  } catch (err) {
    outcome = `[failed: ${causeOf(err)}]`;
  }
  const line = `${at}  ${e.type}  ${e.id}  --> POST ${o.forwardTo} ${outcome}`;
  if (o.json) console.error(line);
  else console.log(line);
}

/** The events of a text/event-stream body (comments and retry lines skipped). */
async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const e: Partial<SseEvent> & { data?: string } = {};
      for (const line of block.split('\n')) {
        if (line === '' || line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') e.id = value;
        else if (field === 'event') e.type = value;
        else if (field === 'data') e.data = e.data === undefined ? value : `${e.data}\n${value}`;
      }
      if (e.id && e.data !== undefined) yield { id: e.id, type: e.type ?? 'message', data: e.data };
    }
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
