// /healthz, /readyz, /openapi.json and the API reference at /docs (Swagger UI, served from our own
// process: no CDN, and a Content-Security-Policy that allows no inline script or style).
import swaggerUi from '@fastify/swagger-ui';

import type { ReadinessCheck } from '../../health/readiness.js';
import type { Server } from '../server.js';
import { registerHealthRoutes } from './health-routes.js';

/**
 * Swagger UI needs its own scripts and styles, the document (/docs/json) and data: images (icons).
 * The one inline style it injects (a <style> element of its bundle) is allowed by its hash, nothing
 * else inline; test/meta.test.ts renders the page in a browser and fails on any violation.
 */
const SWAGGER_UI_INLINE_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";
export const DOCS_CSP = [
  "default-src 'none'",
  "base-uri 'none'",
  "script-src 'self'",
  `style-src 'self' ${SWAGGER_UI_INLINE_STYLE}`,
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function registerMetaRoutes(app: Server, deps: { readiness: ReadinessCheck }) {
  const hidden = { schema: { hide: true } };
  registerHealthRoutes(app, deps);
  app.get('/openapi.json', hidden, async () => app.swagger());
  void app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: DOCS_CSP,
    theme: { title: 'ChatGate API reference' },
    uiConfig: {
      deepLinking: true,
      displayOperationId: true,
      defaultModelsExpandDepth: 0,
      docExpansion: 'list',
      tryItOutEnabled: false,
    },
  });
}
