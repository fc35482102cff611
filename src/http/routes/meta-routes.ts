// /healthz, /readyz, /openapi.json, the API reference at /docs (Swagger UI, served from our own
// process: no CDN, and a Content-Security-Policy that allows no inline script or style), and `/`,
// which sends a browser to the portal and tells any other client where things are.
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

/**
 * The `servers` of the document this service serves: itself. First the path of PUBLIC_BASE_URL,
 * relative to whatever origin the page was loaded from (so "Try it out" calls the host and port
 * the browser reached, with the CSP's connect-src 'self'), then PUBLIC_BASE_URL in full for tools
 * that read /openapi.json from elsewhere. The committed packages/client/openapi.json keeps the
 * static local address of document.ts.
 */
export function servedServers(publicBaseUrl: string): { url: string; description: string }[] {
  const base = new URL(publicBaseUrl);
  const relative = base.pathname.replace(/\/+$/, '') || '/';
  return [
    { url: relative, description: 'This service (the address this page was loaded from)' },
    { url: publicBaseUrl.replace(/\/+$/, ''), description: 'PUBLIC_BASE_URL' },
  ];
}

/** The project's name where Swagger UI shows its (Fastify) logo: white text for the dark top bar. */
const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="220" height="40" viewBox="0 0 220 40" role="img" aria-label="ChatGate API"><text x="0" y="29" font-family="system-ui, sans-serif" font-size="26" font-weight="700" fill="#ffffff">ChatGate API</text></svg>`;

export function registerMetaRoutes(app: Server, deps: { readiness: ReadinessCheck; publicBaseUrl: string }) {
  const hidden = { schema: { hide: true } };
  registerHealthRoutes(app, deps);
  const servers = servedServers(deps.publicBaseUrl);
  const served = (doc: object) => ({ ...doc, servers });
  app.get('/openapi.json', hidden, async () => served(app.swagger()));
  app.get('/', hidden, async (request, reply) => {
    if (/\btext\/html\b/.test(request.headers.accept ?? '')) return reply.redirect('/portal', 302);
    return { service: 'chatgate', docs: '/docs', openapi: '/openapi.json', portal: '/portal', health: '/healthz' };
  });
  void app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: DOCS_CSP,
    transformSpecification: (doc) => served(doc),
    transformSpecificationClone: false,
    logo: { type: 'image/svg+xml', content: Buffer.from(LOGO), href: '/docs', target: '_self' },
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
