// The service's OpenAPI document without a network server: the API role of the app over an
// in-memory embedded database (migrations applied, nothing listens), then app.swagger().
import pino from 'pino';

import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openPgliteDb } from '../src/db/pglite-db.js';

export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const db = await openPgliteDb(null);
  // ADMIN_TOKEN turns the operator API on, so that the document describes it too.
  const config = loadConfig({
    ADMIN_TOKEN: 'openapi-document-only-token',
    ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'),
  });
  const app = await createApp(config, { db, role: 'api', log: pino({ level: 'silent' }) });
  try {
    await app.server!.ready();
    return structuredClone(app.server!.swagger()) as unknown as Record<string, unknown>;
  } finally {
    await app.stop();
    await db.close();
  }
}
