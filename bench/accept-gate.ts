// A provider whose accept path is slow, for the fault drill (issue #32, stall: "reproduce it by
// slowing the provider's accept"). A TCP proxy in front of the emulator that takes at most
// `perSecond` new connections a second; the others wait in its queue, their bytes unread, as in an
// overflowing accept backlog. The client sees its connection open and its request written, so the
// wait counts against its response deadline; a request whose client gave up meanwhile still
// reaches the provider once its turn comes (the provider got it; the client thinks it did not).
// Connections already open are not slowed. `setRate(null)`: no limit (the default).
import net from 'node:net';

export type AcceptGate = {
  readonly port: number;
  setRate(perSecond: number | null): void;
  /** Connections waiting for their turn now, and the most that waited at once. */
  counts(): { waiting: number; peakWaiting: number; total: number };
  close(): Promise<void>;
};

export async function startAcceptGate(target: { host: string; port: number }): Promise<AcceptGate> {
  let rate: number | null = null;
  const queue: net.Socket[] = [];
  const sockets = new Set<net.Socket>();
  let peakWaiting = 0;
  let total = 0;
  let tokens = 0;
  let last = Date.now();

  const pipe = (client: net.Socket) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(upstream);
    const end = () => {
      sockets.delete(upstream);
      sockets.delete(client);
      client.destroy();
      upstream.destroy();
    };
    // The client's request is forwarded even when it has closed its side meanwhile.
    client.on('data', (c: Buffer) => upstream.write(c));
    client.on('end', () => upstream.end());
    upstream.on('data', (c: Buffer) => !client.destroyed && client.write(c));
    upstream.on('close', end).on('error', end);
    client.resume();
  };
  const drain = () => {
    const now = Date.now();
    if (rate === null) tokens = queue.length;
    else tokens = Math.min(rate, tokens + ((now - last) / 1000) * rate);
    last = now;
    while (queue.length > 0 && tokens >= 1) {
      tokens--;
      pipe(queue.shift()!);
    }
  };
  const timer = setInterval(drain, 10);

  const server = net.createServer({ pauseOnConnect: true, allowHalfOpen: true }, (client) => {
    total++;
    sockets.add(client);
    client.on('error', () => sockets.delete(client));
    queue.push(client);
    peakWaiting = Math.max(peakWaiting, queue.length);
    if (rate === null) drain();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    setRate(next) {
      rate = next;
      tokens = 0;
      last = Date.now();
    },
    counts: () => {
      const c = { waiting: queue.length, peakWaiting, total };
      peakWaiting = queue.length;
      return c;
    },
    async close() {
      clearInterval(timer);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
