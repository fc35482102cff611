// A fault-injection TCP proxy for tests: sits between the service and PostgreSQL (or any TCP
// server) and, on command, resets every connection (RST, as in a failover), stalls them (no byte
// either way until it is lifted, as in a network partition), or slows them (each chunk held for a
// delay). New connections made during a stall are accepted and held too. `joinBeforeClose` holds
// what the server sends from a chosen answer on and hands it over in one piece when the server
// closes: a client on a busy machine reads a last answer and the server's goodbye at once.
import net from 'node:net';

export type FaultMode =
  | { kind: 'pass' }
  | { kind: 'stall' }
  | { kind: 'slow'; delayMs: number }
  /**
   * Once: from the first chunk the server sends that contains `from`, that connection's chunks to
   * the client are held; `onHeld` is called (to end the server's side, e.g. pg_terminate_backend),
   * and when the server closes, everything held goes to the client in one write, then the close.
   * The mode is back to `pass` as soon as it has caught its chunk.
   */
  | { kind: 'joinBeforeClose'; from: Buffer; onHeld: () => void };

export type FaultProxy = {
  readonly port: number;
  /** `url` (postgres://… or http://…) with its host and port replaced by the proxy's. */
  via(url: string): string;
  /** Sends RST on both sides of every open connection; new connections go through as before. */
  resetAll(): void;
  setMode(mode: FaultMode): void;
  /** Connections open through the proxy now, and ever. */
  counts(): { open: number; total: number };
  close(): Promise<void>;
};

type Pair = {
  client: net.Socket;
  upstream: net.Socket;
  held: { to: net.Socket; chunk: Buffer }[];
  /** joinBeforeClose: what the server sent since the caught chunk, for the client in one write. */
  joined?: Buffer[];
};

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  let mode: FaultMode = { kind: 'pass' };
  const pairs = new Set<Pair>();
  let total = 0;

  const forward = (pair: Pair, to: net.Socket, chunk: Buffer) => {
    if (pair.joined && to === pair.client) {
      pair.joined.push(chunk);
    } else if (mode.kind === 'joinBeforeClose' && to === pair.client && chunk.includes(mode.from)) {
      const { onHeld } = mode;
      mode = { kind: 'pass' };
      pair.joined = [chunk];
      onHeld();
    } else if (mode.kind === 'stall') {
      pair.held.push({ to, chunk });
    } else if (mode.kind === 'slow') {
      // Order is kept: every chunk waits the same delay from its arrival.
      setTimeout(() => !to.destroyed && to.write(chunk), mode.delayMs);
    } else if (!to.destroyed) to.write(chunk);
  };

  const server = net.createServer((client) => {
    total++;
    const upstream = net.connect(target.port, target.host);
    const pair: Pair = { client, upstream, held: [] };
    pairs.add(pair);
    const end = () => {
      if (pair.joined && !client.destroyed) {
        // The server's last answer and its goodbye, in one piece, then the close.
        client.end(Buffer.concat(pair.joined));
        pair.joined = undefined;
        upstream.destroy();
        pairs.delete(pair);
        return;
      }
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (c: Buffer) => forward(pair, upstream, c));
    upstream.on('data', (c: Buffer) => forward(pair, client, c));
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    resetAll() {
      for (const p of [...pairs]) {
        pairs.delete(p);
        p.client.resetAndDestroy();
        p.upstream.resetAndDestroy();
      }
    },
    setMode(next) {
      mode = next;
      if (next.kind === 'stall') return;
      for (const p of pairs) {
        const held = p.held;
        p.held = [];
        for (const h of held) if (!h.to.destroyed) h.to.write(h.chunk);
      }
    },
    counts: () => ({ open: pairs.size, total }),
    async close() {
      for (const p of pairs) {
        p.client.destroy();
        p.upstream.destroy();
      }
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
