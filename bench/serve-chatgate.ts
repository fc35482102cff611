// Our service as the bench runs it, in its own process so its RSS can be read from /proc:
// API role by default (the POST /messages bench measures acceptance); BENCH_ROLE=worker for the
// dispatch bench. Stops on SIGTERM.
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const config = loadConfig({ ...process.env, PORT: process.env.PORT, LOG_LEVEL: 'warn' });
const app = await createApp(config, { role: process.env.BENCH_ROLE === 'worker' ? 'worker' : 'api' });
process.once('SIGTERM', () => {
  app.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
});
await app.start();
