// The provider emulator in its own process for the dispatch bench (port and latency from env).
import { createEmulator } from '../src/emulator/emulator-server.js';

const { app } = createEmulator({
  callbackUrl: null,
  appSecret: null,
  latencyMs: Number(process.env.EMULATOR_LATENCY_MS ?? 100),
});
app.get('/healthz', async () => ({ status: 'ok' }));
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
