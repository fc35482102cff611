// What the portal's pages use: the same service instances the API routes use, plus the portal's own.
import type { FastifyRequest } from 'fastify';

import type { MessagingLimits } from '../../accounts/messaging-limits.js';
import type { Caller } from '../../auth/caller.js';
import type { Directory, Principal, Tenant } from '../../auth/directory.js';
import type { BroadcastService } from '../../broadcasts/broadcast-service.js';
import type { ConversationService } from '../../conversations/conversation-service.js';
import type { SettingsService } from '../../inbound/settings-service.js';
import type { KeyService } from '../../keys/key-service.js';
import type { MessageCancel } from '../../messages/cancel-message.js';
import type { MessageQueries } from '../../messages/message-store.js';
import type { SendService } from '../../messages/send-service.js';
import type { AuditLog } from '../../portal/audit-log.js';
import type { PasswordResetService } from '../../portal/password-reset-service.js';
import type { PortalQueries } from '../../portal/portal-store.js';
import type { Session, SessionService } from '../../portal/session-service.js';
import type { TeamService } from '../../portal/team-service.js';
import type { TwoFactorService } from '../../portal/two-factor-service.js';
import type { UserService } from '../../portal/user-service.js';
import type { InboundFiles } from '../../senders/inbound-files.js';
import type { SenderService } from '../../senders/sender-service.js';
import { AppError, errors } from '../../shared/errors.js';
import type { EmbeddedSignup } from '../../signup/embedded-signup.js';
import type { SuppressionService } from '../../suppressions/suppression-service.js';
import type { TemplateService } from '../../templates/template-service.js';
import type { UsageService } from '../../usage/usage-service.js';
import type { EndpointService } from '../../webhooks/endpoint-service.js';
import { pageQuery } from './input.js';
import type { PageContext } from './layout.js';

export type PortalDeps = {
  publicBaseUrl: string;
  secureCookies: boolean;
  allowPrivateUrls: boolean;
  directory: Pick<Directory, 'tenant'>;
  keys: KeyService;
  messages: MessageQueries;
  messageCancel: MessageCancel;
  broadcasts: BroadcastService;
  senders: SenderService;
  /** Inbound messages' files (the API's service), played and shown by the portal (inbox-media-routes.ts). */
  files: InboundFiles;
  /** One number's conversation (conversation-routes.ts). */
  conversations: ConversationService;
  /** The API's send service: the conversation's reply box sends through it. */
  sends: SendService;
  settings: SettingsService;
  endpoints: EndpointService;
  templates: TemplateService;
  users: UserService;
  /** The customer's own team: roles, disabling, password changes (team-routes.ts). */
  team: TeamService;
  sessions: SessionService;
  audit: AuditLog;
  queries: PortalQueries;
  usage: UsageService;
  /** Two-factor sign-in (TOTP, recovery codes) and the login's code step (decision 0051). */
  twoFactor: TwoFactorService;
  /** Password reset by email; `enabled` only when SMTP_URL is set. */
  passwordResets: PasswordResetService;
  /** The API's suppression lists (suppressions-routes.ts). */
  suppressions: SuppressionService;
  /** Each account's portfolio messaging limit and use (decision 0044), shown on the accounts page. */
  messagingLimits: Pick<MessagingLimits, 'of'>;
  /** Self-serve linking with the provider's Embedded Signup (signup-routes.ts, decision 0076). */
  embeddedSignup: Pick<EmbeddedSignup, 'launch' | 'link'>;
};

/** The signed-in user's customer, and the user as the services take a caller (portalPrincipal). */
export async function tenantOf(
  deps: PortalDeps,
  request: FastifyRequest,
): Promise<{ session: Session; tenant: Tenant; caller: Caller; ctx: PageContext }> {
  const session = request.portalSession;
  if (!session) throw errors.unauthorized();
  const tenant = await deps.directory.tenant(session.customerId);
  if (!tenant) throw errors.notFound();
  const caller = { principal: portalPrincipal(session), tenant };
  return { session, tenant, caller, ctx: { session, plan: tenant.plan, path: request.url.split('?')[0]! } };
}

/**
 * A portal user acting through a service that takes an API principal: never sandbox, never scoped
 * to one account, template access by role (an owner manages, a viewer reads).
 */
export function portalPrincipal(session: Session): Principal {
  return {
    keyId: null,
    customerId: session.customerId,
    sandbox: false,
    scopeAccountId: null,
    templateAccess: session.role === 'owner' ? 'manage' : 'read',
  };
}

export function str(body: unknown, name: string): string {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : '';
}

export function audit(
  deps: PortalDeps,
  request: FastifyRequest,
  session: Session,
  action: string,
  target: string | null,
) {
  return deps.audit.record({ customerId: session.customerId, userId: session.userId }, action, target, request.ip);
}

/** An entry about a user who just proved who they are (logged in, accepted an invitation), named by email. */
export function auditUser(
  deps: PortalDeps,
  request: FastifyRequest,
  user: { id: string; customerId: string; email: string },
  action: string,
) {
  return deps.audit.record({ customerId: user.customerId, userId: user.id }, action, user.email, request.ip);
}

/**
 * The password re-check before a sensitive action (reveal or create a key, change a webhook URL),
 * from the form's `password` field. A failed one (wrong password, or throttled) is audited as
 * `<action>_failed` and thrown on.
 */
export async function recheckPassword(
  deps: PortalDeps,
  request: FastifyRequest,
  session: Session,
  action: string,
  target: string | null,
): Promise<void> {
  try {
    await deps.users.confirmPassword(session.userId, str(request.body, 'password'), request.ip);
  } catch (err) {
    if (err instanceof AppError && (err.status === 401 || err.status === 429))
      await audit(deps, request, session, `${action}_failed`, target);
    throw err;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id; anything that is not a UUID is simply not found (as another customer's id is). */
export function idParam(request: FastifyRequest, name = 'id'): string {
  const v = (request.params as Record<string, string>)[name] ?? '';
  if (!UUID.test(v)) throw errors.notFound();
  return v.toLowerCase();
}

/** Keeps a secret for the page the form redirects to (shown once there, never in the URL); returns its id. */
export function stashSecret(deps: PortalDeps, request: FastifyRequest, kind: string, value: string): Promise<string> {
  if (!request.portalSessionId) throw errors.unauthorized();
  return deps.sessions.stash(request.portalSessionId, kind, value);
}

/**
 * The secret a redirect's `?shown=<id>` names, read (and deleted) once; `'gone'` when the id is
 * there but the secret is not (a reload, another session), null without an id.
 */
export async function takeSecret(
  deps: PortalDeps,
  request: FastifyRequest,
  kindPrefix: string,
): Promise<{ kind: string; value: string } | 'gone' | null> {
  const id = pageQuery(request).shown;
  if (id === undefined || id === '') return null;
  if (!request.portalSessionId) return 'gone';
  return (await deps.sessions.takeStashed(request.portalSessionId, id, kindPrefix)) ?? 'gone';
}
