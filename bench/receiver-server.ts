// A webhook receiver for the bench, in its own process: answers 204 at once (MODE=fast) or never
// answers (MODE=dead); GET /__count tells how many deliveries arrived and when the first and last did.
import http from 'node:http';

const mode = process.env.MODE ?? 'fast';
let count = 0;
let first = 0;
let last = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/__count') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count, first, last }));
    return;
  }
  if (req.method === 'GET' && req.url === '/healthz') {
    res.writeHead(200).end('{"status":"ok"}');
    return;
  }
  req.resume();
  req.on('end', () => {
    if (mode === 'dead') return; // hold the connection; the sender times out
    const now = Date.now();
    count++;
    if (first === 0) first = now;
    last = now;
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 30_000;
process.once('SIGTERM', () => process.exit(0));
server.listen(Number(process.env.PORT), '127.0.0.1');
