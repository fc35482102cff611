// GET /__emulator/send-counts: messages received more than once, sends open now, arrival times.
import { afterEach, describe, expect, it } from 'vitest';

import { createEmulator } from './emulator-server.js';

const toClose: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (toClose.length > 0) await toClose.pop()!();
});

type Emulator = ReturnType<typeof createEmulator>['app'];

function send(app: Emulator, messageId: string) {
  return app.inject({
    method: 'POST',
    url: '/v23.0/p1/messages',
    headers: { authorization: 'Bearer t' },
    payload: {
      messaging_product: 'whatsapp',
      to: '15550001000',
      type: 'text',
      text: { body: 'x' },
      biz_opaque_callback_data: messageId,
    },
  });
}

const counts = async (app: Emulator, since = 0) =>
  (await app.inject({ method: 'GET', url: `/__emulator/send-counts?since=${since}` })).json();

describe('emulator send counts', () => {
  it('names each message received more than once and lists arrival times since a moment', async () => {
    const { app } = createEmulator({ callbackUrl: null, appSecret: null });
    toClose.push(() => app.close());
    const before = Date.now();
    for (const id of ['m1', 'm2', 'm1', 'm3', 'm1']) expect((await send(app, id)).statusCode).toBe(200);
    const c = await counts(app, before);
    expect(c).toMatchObject({ received: 5, distinct: 3, duplicated: [{ messageId: 'm1', count: 3 }], open: 0 });
    expect(c.arrivals).toHaveLength(5);
    expect((await counts(app, Date.now() + 60_000)).arrivals).toEqual([]);
  });

  it('counts a send as open from its arrival until it is answered', async () => {
    const { app } = createEmulator({ callbackUrl: null, appSecret: null, latencyMs: 300 });
    toClose.push(() => app.close());
    const pending = send(app, 'slow');
    let open = 0;
    while (open === 0) open = (await counts(app)).open as number;
    expect(open).toBe(1);
    expect((await pending).statusCode).toBe(200);
    const after = await counts(app);
    expect(after).toMatchObject({ open: 0, received: 1 });
    // The previous call saw the open send, and the peak starts again at each call.
    expect((await counts(app)).peakOpen).toBe(0);
  });
});
