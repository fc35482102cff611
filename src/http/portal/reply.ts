// What every portal page shares at the edge, kept apart from portal-plugin.ts so that the page
// route files never import the plugin that registers them.
import crypto from 'node:crypto';

import type { FastifyReply } from 'fastify';

import type { Html } from './html.js';

/** The cookie that carries the double-submit CSRF token of forms shown before login. */
export const PRE_CSRF_COOKIE = 'chatgate_form';

export function sendPage(reply: FastifyReply, page: Html, status = 200) {
  return reply.code(status).type('text/html; charset=utf-8').send(page.value);
}

/** A fresh double-submit token for a form shown before login (its cookie set with it). */
export function preToken(reply: FastifyReply, secure: boolean): string {
  const token = crypto.randomBytes(24).toString('base64url');
  void reply.setCookie(PRE_CSRF_COOKIE, token, { path: '/portal', httpOnly: true, sameSite: 'strict', secure });
  return token;
}

/** The session cookie of a login (password, or the two-factor code step): one set of options for both. */
export function setSessionCookie(reply: FastifyReply, name: string, sessionId: string, secure: boolean): void {
  void reply.setCookie(name, sessionId, { path: '/', httpOnly: true, sameSite: 'lax', secure });
}
