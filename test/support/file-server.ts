// A file server for media-URL tests: a real node:http server on 127.0.0.1 serving what each test
// puts at a path (bytes and headers, a status, or a redirect), recording every request.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Served = { status?: number; body?: Buffer | string; headers?: Record<string, string>; location?: string };

export type FileServer = {
  readonly url: string;
  /** Serves this at `path` (replacing what was there); a list is answered in turn, its last item from then on. */
  put(path: string, served: Served | Served[]): void;
  /** Paths requested, in order. */
  readonly hits: string[];
  hitsOf(path: string): number;
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
};

export async function startFileServer(): Promise<FileServer> {
  const routes = new Map<string, Served[]>();
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.push(path);
    const queue = routes.get(path);
    const served =
      queue === undefined ? { status: 404, body: 'not found' } : queue.length > 1 ? queue.shift()! : queue[0]!;
    const headers: Record<string, string> = { ...(served.headers ?? {}) };
    if (served.location !== undefined) headers.location = served.location;
    res.writeHead(served.status ?? (served.location !== undefined ? 302 : 200), headers);
    res.end(served.body ?? '');
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    put: (path, served) => routes.set(path, Array.isArray(served) ? [...served] : [served]),
    hits,
    hitsOf: (path) => hits.filter((h) => h === path).length,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
