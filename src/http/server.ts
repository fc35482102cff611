// The HTTP edge: Fastify with TypeBox schemas, one error mapping, request ids, auth for the public API.
import crypto from 'node:crypto';

import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import type { Logger } from 'pino';

import type { Caller } from '../auth/caller.js';
import type { Principal, Tenant } from '../auth/directory.js';
import { databaseFault } from '../db/db-errors.js';
import { AppError, errors } from '../shared/errors.js';
import { answerClientError } from './client-error.js';
import { limitConnectionsPerAddress } from './connection-limit.js';
import { settleBodyBeforeAnswer } from './drain-body.js';
import { checkRequestInput } from './input-guard.js';
import { swaggerOptions } from './openapi/document.js';
import { registerResponseCheck } from './response-check.js';
import { serializerCompiler, toProblems, validatorCompiler } from './validation.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /** Ids of the message and chat account a request acted on, for its log line (see tagRequest). */
    logIds: LogIds | null;
    /** The principal's customer: plan, default country, accounts (set with the principal). */
    tenant: Tenant | null;
  }
  interface FastifyInstance {
    /**
     * Counts and logs (once per period per reason) a database fault answered 503 (health/database-faults.ts);
     * the request's own log line carries its 503.
     */
    reportDatabaseFault(err: unknown): void;
  }
}

export type LogIds = { messageId?: string; accountId?: string };

/** Names the message and account a request acted on: its one log line carries them. */
export function tagRequest(request: FastifyRequest, ids: LogIds): void {
  request.logIds = { ...request.logIds, ...ids };
}

export type Server = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;

export function createServer(opts: {
  log: Logger;
  bodyLimit: number;
  bodyReadTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /** Open connections from one client address (an IPv6 /64); 0: no limit (connection-limit.ts). */
  maxConnectionsPerAddress: number;
  /** Proxies believed about the client's address (X-Forwarded-For): see TRUST_PROXY. */
  trustProxy?: boolean | number | string[];
  /** Tests: fail any answer that serialization changed (response-check.ts). */
  checkResponses?: boolean;
  /** Database faults answered 503 (API and portal): counted and logged once per period (health/database-faults.ts). */
  reportDatabaseFault?: (err: unknown) => void;
  /** Each answered request, by route template (null: no route matched) and status (metrics). */
  observeRequest?: (method: string, route: string | null, status: number, seconds: number) => void;
}): Server {
  const app = Fastify({
    // A hop count trusts that many proxies nearest to us (what Fastify does with a number at run time,
    // which its types do not list). `true` is read as one hop, never as "believe every address in
    // X-Forwarded-For": that would take the client's own leftmost entries (app.ts warns).
    trustProxy:
      typeof opts.trustProxy === 'number' || opts.trustProxy === true
        ? (
            (hops: number) => (_address: string, hop: number) =>
              hop < hops
          )(opts.trustProxy === true ? 1 : opts.trustProxy)
        : (opts.trustProxy ?? false),
    loggerInstance: opts.log,
    // Every request must have arrived, head and body, within the deadline, or Node answers 408
    // (client-error.ts) and closes: a stalled upload cannot hold its place for ever. Node looks
    // for late requests every connectionsCheckingInterval (30 s by default: too coarse).
    // The head must come sooner (HEADERS_TIMEOUT_MS): a connection that sends nothing, or a head
    // byte by byte, is answered 408 and closed then. An idle keep-alive connection is closed after
    // KEEP_ALIVE_TIMEOUT_MS (Fastify's own default holds it 72 s), and at most MAX_CONNECTIONS
    // are open at once, MAX_CONNECTIONS_PER_ADDRESS from one client address (below).
    requestTimeout: opts.bodyReadTimeoutMs,
    keepAliveTimeout: opts.keepAliveTimeoutMs,
    http: {
      requestTimeout: opts.bodyReadTimeoutMs,
      headersTimeout: Math.min(opts.headersTimeoutMs, opts.bodyReadTimeoutMs),
      connectionsCheckingInterval: Math.min(
        1000,
        Math.ceil(Math.min(opts.headersTimeoutMs, opts.bodyReadTimeoutMs) / 4),
      ),
    },
    clientErrorHandler: answerClientError(opts.log),
    logController: new LogController({ disableRequestLogging: true }), // one line per request, from onResponse
    bodyLimit: opts.bodyLimit,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : crypto.randomUUID();
    },
    routerOptions: { maxParamLength: 500 },
    // Router-level failures (bad %-escapes, over-long parameters) answer in our error shape too.
    frameworkErrors: (err, _request, reply) => {
      void (reply as unknown as FastifyReply).code(400).send({ error: 'bad_request', message: err.message });
    },
    ajv: { customOptions: { strict: false } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as Server;

  app.server.maxConnections = opts.maxConnections;
  limitConnectionsPerAddress(app.server, { max: opts.maxConnectionsPerAddress, log: opts.log });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('principal', null);
  app.decorateRequest('logIds', null);
  app.decorateRequest('tenant', null);
  app.decorate(
    'reportDatabaseFault',
    opts.reportDatabaseFault ??
      ((err: unknown) => opts.log.warn({ err, reason: databaseFault(err) }, 'database unavailable: answered 503')),
  );

  // Hooks that run on every request are plain functions calling done (no promise per hook per
  // request); the one that may have to wait (an answer before its body arrived) waits only then.
  app.addHook('preValidation', checkRequestInput);

  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    // No answer is sniffed into another type, and none is kept by a cache unless its route says so:
    // answers carry secrets (webhook secrets, new API keys, invitation links) and customer data.
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    if (request.raw.complete) return done(null, payload);
    settleBodyBeforeAnswer(request, reply, payload).then((p) => done(null, p), done);
  });
  if (opts.checkResponses) registerResponseCheck(app);
  app.addHook('onResponse', logRequest);
  if (opts.observeRequest) app.addHook('onResponse', observeRequest(opts.observeRequest));

  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ error: 'not_found' });
  });

  app.setErrorHandler(answerError);

  void app.register(swagger, swaggerOptions());
  return app;
}

/** Reports each answered request by the template the router matched (`/messages/:id`), never the URL. */
function observeRequest(observe: NonNullable<Parameters<typeof createServer>[0]['observeRequest']>) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    observe(
      request.method,
      request.is404 ? null : (request.routeOptions.url ?? null),
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  };
}

/** The one log line of a request (at debug for quietRequest's); nothing is built when that level is off. */
function logRequest(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const url = request.routeOptions.url ?? request.url.split('?')[0]!;
  const level = quietRequest(url, reply.statusCode) ? 'debug' : 'info';
  if ((request.log as unknown as Logger).isLevelEnabled(level))
    request.log[level](
      {
        method: request.method,
        url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        customerId: request.principal?.customerId,
        accountId: request.logIds?.accountId ?? request.principal?.scopeAccountId ?? undefined,
        messageId: request.logIds?.messageId,
      },
      'request',
    );
  done();
}

/**
 * The one error mapping: AppErrors as they say, database faults as 503 database_unavailable,
 * framework and parse errors as 4xx, the rest 500.
 */
function answerError(err: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) {
  if (err instanceof AppError) return reply.code(err.status).headers(err.headers).send(err.body());
  const fault = databaseFault(err);
  if (fault !== null) {
    request.server.reportDatabaseFault(err);
    const e = errors.databaseUnavailable(fault);
    return reply.code(e.status).headers(e.headers).send(e.body());
  }
  if (err.validation) {
    return reply.code(400).send(errors.validation(toProblems(err.validation as never)).body());
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return reply.code(413).send(errors.payloadTooLarge().body());
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return reply.code(415).send(errors.unsupportedMediaType().body());
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return reply
        .code(400)
        .send(errors.validation([{ path: '', message: 'body must be a valid JSON document' }]).body());
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return reply.code(400).send({ error: 'bad_request', message: err.message });
  }
  if (err instanceof SyntaxError && /prototype property/.test(err.message)) {
    return reply
      .code(400)
      .send(
        errors.validation([{ path: '', message: 'must not contain __proto__ or constructor.prototype keys' }]).body(),
      );
  }
  if (
    err instanceof SyntaxError ||
    (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500)
  ) {
    return reply.code(err.statusCode ?? 400).send({ error: 'bad_request', message: err.message });
  }
  request.log.error({ err }, 'unhandled error');
  return reply.code(500).send({ error: 'Internal server error' });
}

/**
 * Requests logged at debug: probes and scrapes (/healthz, /readyz, /metrics) and the provider's
 * receipt POSTs, whose every status change the lifecycle logs with its message id. Answered with
 * an error (a failing probe, a refused scrape, a receipt with a bad signature), they stay at info.
 */
export function quietRequest(url: string, status: number): boolean {
  if (status >= 400) return false;
  return url === '/healthz' || url === '/readyz' || url === '/metrics' || url.startsWith('/provider/webhooks/');
}

/**
 * The public API's caller, resolved once per request by an onRequest hook (before body parsing
 * and validation): the key's principal, then its customer. Handlers read it with callerOf.
 */
export function apiKeyAuth(deps: {
  authenticate: (raw: string) => Promise<Principal | null>;
  tenant: (customerId: string) => Promise<Tenant | null>;
}) {
  return async (request: FastifyRequest) => {
    const raw = request.headers['x-api-key'];
    if (raw === undefined || raw === '') throw errors.missingKey();
    if (typeof raw !== 'string' || raw.length > 200) throw errors.invalidKey();
    const principal = await deps.authenticate(raw);
    if (!principal) throw errors.invalidKey();
    request.principal = principal;
    const tenant = await deps.tenant(principal.customerId);
    if (!tenant) throw errors.invalidKey();
    request.tenant = tenant;
  };
}

export type { Caller };

/** Who is calling, as the onRequest hook (apiKeyAuth) resolved it. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.principal || !request.tenant) throw errors.invalidKey();
  return { principal: request.principal, tenant: request.tenant };
}

export function principalOf(request: FastifyRequest): Principal {
  return callerOf(request).principal;
}
