// The customer portal at /portal: server-rendered HTML over the same services as the API.
// This file is the portal's edge: cookies and form bodies, security headers, the session, CSRF
// and role checks, error pages, static assets; each page's routes live in their own file.
import fs from 'node:fs';
import { createRequire } from 'node:module';

import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { databaseFault } from '../../db/db-errors.js';
import type { Session } from '../../portal/session-service.js';
import { safeEqual } from '../../shared/crypto.js';
import { AppError, errors } from '../../shared/errors.js';
import { registerAccountRoutes } from './accounts-routes.js';
import { registerAuditRoutes } from './audit-routes.js';
import { registerAuthRoutes } from './auth-routes.js';
import { registerBroadcastRoutes } from './broadcasts-routes.js';
import { registerConversationRoutes } from './conversation-routes.js';
import type { PortalDeps } from './deps.js';
import { type Html, html } from './html.js';
import { registerInboxMediaRoutes } from './inbox-media-routes.js';
import { registerInboxRoutes } from './inbox-routes.js';
import { registerKeyRoutes } from './keys-routes.js';
import { errorBox, publicPage, wayBack } from './layout.js';
import { registerMessageRoutes } from './messages-routes.js';
import { registerOverviewRoutes } from './overview-routes.js';
import { registerPasswordResetRoutes } from './password-reset-routes.js';
import { registerProfileRoutes } from './profile-routes.js';
import { PRE_CSRF_COOKIE, sendPage } from './reply.js';
import { registerSignupRoutes } from './signup-routes.js';
import { registerSuppressionPages } from './suppressions-routes.js';
import { registerTeamRoutes } from './team-routes.js';
import { registerTemplateRoutes } from './templates-routes.js';
import { registerTwoFactorRoutes } from './two-factor-routes.js';
import { registerWebhookRoutes } from './webhooks-routes.js';

declare module 'fastify' {
  interface FastifyRequest {
    portalSession: Session | null;
    portalSessionId: string | null;
  }
  interface FastifyContextConfig {
    /** Reachable without a session (login and its code step, invitation, password reset, assets). */
    portalPublic?: boolean;
    /** A state-changing request a viewer may make (log out). */
    portalViewerMayPost?: boolean;
  }
}

/**
 * Content-Security-Policy: scripts and styles only from the portal's own files; no inline script.
 * A route that set its own, stricter policy keeps it (an inbound file, inbox-media-routes.ts).
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  // Inbound voice notes and videos, played from the portal's own /portal/inbox/{id}/media.
  "media-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

export function sessionCookieName(secure: boolean): string {
  // The __Host- prefix pins the cookie to this host and path / and requires Secure.
  return secure ? '__Host-chatgate_session' : 'chatgate_session';
}

function loadAssets() {
  const dir = new URL('./assets/', import.meta.url);
  const require = createRequire(import.meta.url);
  return {
    'portal.css': { type: 'text/css; charset=utf-8', body: fs.readFileSync(new URL('portal.css', dir)) },
    'portal.js': { type: 'text/javascript; charset=utf-8', body: fs.readFileSync(new URL('portal.js', dir)) },
    'signup.js': { type: 'text/javascript; charset=utf-8', body: fs.readFileSync(new URL('signup.js', dir)) },
    'htmx.min.js': {
      type: 'text/javascript; charset=utf-8',
      body: fs.readFileSync(require.resolve('htmx.org/dist/htmx.min.js')),
    },
  } as Record<string, { type: string; body: Buffer }>;
}

export function registerPortal(app: FastifyInstance, deps: PortalDeps): void {
  const cookieName = sessionCookieName(deps.secureCookies);
  const assets = loadAssets();

  void app.register(
    async (portal) => {
      // Pages for people, not API operations: none of them belongs in the OpenAPI document. A page
      // reads its query with pageQuery, undeclared: the input guard checks every parameter.
      portal.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true };
        route.config = { ...route.config, readsAnyQuery: true };
      });
      await portal.register(cookie);
      // Form bodies up to BODY_LIMIT_BYTES (the server's limit). Multipart is registered only
      // around the one route that uploads a file (the broadcast CSV, upload.ts).
      await portal.register(formbody);
      portal.decorateRequest('portalSession', null);
      portal.decorateRequest('portalSessionId', null);

      portal.addHook('onSend', async (_request, reply) => securityHeaders(reply, deps.secureCookies));

      // The session, origin and role are checked in onRequest, before any body is read: a request
      // without a session (or from another site, or a viewer's) is answered without its body
      // being parsed. Only the CSRF token, which travels in the body, waits for it (preHandler).
      portal.addHook('onRequest', (request, reply) => checkSession(deps, cookieName, request, reply));

      portal.addHook('preHandler', async (request, reply) => {
        if (request.method === 'GET' || request.method === 'HEAD') return;
        if (request.routeOptions.config.portalPublic) {
          if (!preSessionTokenOk(request)) return refuseCsrf(reply);
          return;
        }
        const given = tokenOf(request);
        if (!given || !safeEqual(given, request.portalSession!.csrfToken)) return refuseCsrf(reply);
      });

      portal.setNotFoundHandler((request, reply) => sendPage(reply, notFoundPage(request.url), 404));
      portal.setErrorHandler(portalError);

      portal.get('/assets/:name', { config: { portalPublic: true } }, async (request, reply) => {
        const asset = assets[(request.params as { name: string }).name];
        if (!asset) return sendPage(reply, notFoundPage(request.url), 404);
        return reply.header('cache-control', 'public, max-age=3600').type(asset.type).send(asset.body);
      });

      registerAuthRoutes(portal, deps, cookieName);
      registerOverviewRoutes(portal, deps);
      registerMessageRoutes(portal, deps);
      registerKeyRoutes(portal, deps);
      registerAccountRoutes(portal, deps);
      registerSignupRoutes(portal, deps);
      registerWebhookRoutes(portal, deps);
      registerInboxRoutes(portal, deps);
      registerConversationRoutes(portal, deps);
      registerInboxMediaRoutes(portal, deps);
      registerBroadcastRoutes(portal, deps);
      registerTemplateRoutes(portal, deps);
      registerSuppressionPages(portal, deps);
      registerAuditRoutes(portal, deps);
      registerTeamRoutes(portal, deps);
      registerProfileRoutes(portal, deps);
      registerTwoFactorRoutes(portal, deps, cookieName);
      registerPasswordResetRoutes(portal, deps);
    },
    { prefix: '/portal' },
  );
}

function securityHeaders(reply: FastifyReply, secureCookies: boolean): void {
  if (!reply.getHeader('content-security-policy')) reply.header('content-security-policy', CSP);
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-content-type-options', 'nosniff');
  // A page that opens a provider popup (signup-routes.ts) sets its own, looser opener policy.
  if (!reply.getHeader('cross-origin-opener-policy')) reply.header('cross-origin-opener-policy', 'same-origin');
  reply.header('permissions-policy', 'camera=(), microphone=(), geolocation=()');
  if (secureCookies) reply.header('strict-transport-security', 'max-age=31536000');
  if (!reply.getHeader('cache-control')) reply.header('cache-control', 'no-store');
}

async function checkSession(deps: PortalDeps, cookieName: string, request: FastifyRequest, reply: FastifyReply) {
  const config = request.routeOptions.config;
  const id = request.cookies[cookieName];
  request.portalSessionId = id ?? null;
  request.portalSession = id ? await deps.sessions.get(id) : null;
  const changing = request.method !== 'GET' && request.method !== 'HEAD';
  if (changing && !sameOrigin(request)) return refuseCsrf(reply);
  if (config.portalPublic) return;
  const session = request.portalSession;
  if (!session) {
    if (id) void reply.clearCookie(cookieName, { path: '/' });
    return reply.redirect('/portal/login', 303);
  }
  if (changing && session.role !== 'owner' && !config.portalViewerMayPost) {
    return sendPage(reply, readOnlyPage(), 403);
  }
}

function readOnlyPage(): Html {
  return publicPage(
    'Read only',
    html`<p role="alert">
        Your role is <strong>viewer</strong>: you can look but not change anything. An owner of your account can do
        this.
      </p>
      <p><a href="/portal">Back to the overview</a></p>`,
  );
}

/**
 * AppErrors as their page; a database fault as a 503 "try again" page; other client errors as
 * "Bad request"; anything else logged, as a 500 page.
 */
function portalError(err: unknown, request: FastifyRequest, reply: FastifyReply) {
  if (err instanceof AppError) {
    if (err.status === 404) return sendPage(reply, notFoundPage(request.url), 404);
    return sendPage(reply, publicPage('Error', html`${errorBox(err)}${wayBack(request.url)}`), err.status);
  }
  const fault = databaseFault(err);
  if (fault !== null) {
    request.server.reportDatabaseFault(err);
    const e = errors.databaseUnavailable(fault);
    void reply.headers(e.headers);
    return sendPage(reply, publicPage('Try again shortly', errorBox(e)), 503);
  }
  const status = (err as { statusCode?: number }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500)
    return sendPage(
      reply,
      publicPage(
        status === 413 ? 'Too large' : 'Bad request',
        html`<p role="alert">
            ${status === 413 ? 'The form is larger than the portal takes: shorten what you entered.' : (err as Error).message}
          </p>
          ${wayBack(request.url)}`,
      ),
      status,
    );
  request.log.error({ err }, 'portal: unhandled error');
  return sendPage(reply, publicPage('Error', errorBox(err)), 500);
}

/**
 * Nothing at this address: a link that went stale, or Back to the page of something since
 * deleted (an endpoint, a rule): the way back to its section's list, and to the overview.
 */
function notFoundPage(path: string): Html {
  return publicPage(
    'Not found',
    html`<p>There is nothing here: what this page showed may have been deleted, or the link is wrong.</p>
      ${wayBack(path)}`,
  );
}

function tokenOf(request: FastifyRequest): string | null {
  const header = request.headers['x-csrf-token'];
  if (typeof header === 'string') return header;
  const body = request.body as Record<string, unknown> | undefined;
  return body && typeof body._csrf === 'string' ? body._csrf : null;
}

/** Forms before login carry a token equal to a cookie set with the form (double submit). */
function preSessionTokenOk(request: FastifyRequest): boolean {
  const cookieToken = request.cookies[PRE_CSRF_COOKIE];
  const given = tokenOf(request);
  return !!cookieToken && !!given && cookieToken.length >= 20 && safeEqual(cookieToken, given);
}

/** Browsers say where a request comes from; a cross-site one never changes anything. */
function sameOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') return false;
  const origin = request.headers.origin;
  // Under Referrer-Policy no-referrer browsers send "Origin: null" even for same-origin forms;
  // Sec-Fetch-Site (above) and the token still decide those.
  if (typeof origin === 'string' && origin !== 'null') {
    try {
      return new URL(origin).host === request.headers.host;
    } catch {
      return false;
    }
  }
  return true;
}

function refuseCsrf(reply: FastifyReply) {
  return sendPage(
    reply,
    publicPage(
      'Form expired',
      html`<p role="alert">
          This form has expired or did not come from the portal (CSRF check failed). Reload the page and try again.
        </p>
        <p><a href="/portal">Back to the portal</a></p>`,
    ),
    403,
  );
}
