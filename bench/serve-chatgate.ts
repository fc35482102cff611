// Our service as the bench runs it: API role only (the bench measures acceptance, not delivery),
// in its own process so its RSS can be read from /proc. Stops on SIGTERM.
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const config = loadConfig({ ...process.env, PORT: process.env.PORT, LOG_LEVEL: 'warn' });
const app = await createApp(config, { role: 'api' });
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
