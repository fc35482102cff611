// GET /events/stream read on the client: the Server-Sent Events frames turned into events, each
// with the envelope exactly as sent (what `chatgate listen` signs and forwards) and parsed.
import type { WebhookEvent } from './events.js';

/** One event of the stream: its id (for `lastEventId` on a reconnect), its type, its envelope. */
export type StreamedEvent = {
  id: string;
  type: WebhookEvent['type'];
  /** The envelope as the service sent it (`{eventId, type, createdAt, data}`), byte for byte. */
  payload: string;
  /** The same, parsed. */
  event: WebhookEvent;
};

/** The events of a text/event-stream body; comment lines (the keepalive) and `retry:` are skipped. */
export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamedEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = parseFrame(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (frame) yield frame;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function parseFrame(block: string): StreamedEvent | null {
  let id: string | undefined;
  let type: string | undefined;
  let data: string | undefined;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') type = value;
    else if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
  }
  if (id === undefined || data === undefined) return null;
  const event = JSON.parse(data) as WebhookEvent;
  return { id, type: (type ?? event.type) as WebhookEvent['type'], payload: data, event };
}
