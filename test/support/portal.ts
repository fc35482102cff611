// Portal test helpers: a user created through the operator API, activated through the invitation
// link, and a cookie-keeping client that logs in and submits forms like a browser would.
import { Secret, TOTP } from 'otpauth';

import { ADMIN_TOKEN, call } from './harness.js';
import { recordSecret } from './test-logs.js';

export const PASSWORD = 'a-long-portal-passphrase-42';

export async function createPortalUser(url: string, customerId: string, email: string, role = 'owner') {
  const res = await call(url, 'POST', `/admin/customers/${customerId}/users`, { admin: true, body: { email, role } });
  if (res.status !== 201) throw new Error(`user: ${res.status} ${JSON.stringify(res.body)}`);
  const link = new URL(res.body.invitationUrl as string);
  const client = new PortalClient(url);
  const form = await client.get(link.pathname);
  const set = await client.post(link.pathname, { _csrf: client.formToken(form.text), password: PASSWORD });
  if (set.status !== 303) throw new Error(`invitation: ${set.status} ${set.text.slice(0, 300)}`);
  return { id: res.body.id as string, email };
}

export type Page = { status: number; text: string; headers: Headers };

export class PortalClient {
  cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  private keep(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  async request(
    method: string,
    path: string,
    body?: Record<string, string | string[]>,
    headers: Record<string, string> = {},
  ) {
    let payload: string | undefined;
    if (body) {
      const p = new URLSearchParams();
      for (const [k, v] of Object.entries(body)) for (const x of Array.isArray(v) ? v : [v]) p.append(k, x);
      payload = p.toString();
    }
    const res = await fetch(`${this.base}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        ...(payload !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      body: payload,
    });
    this.keep(res);
    return { status: res.status, text: await res.text(), headers: res.headers } as Page;
  }
  get(path: string) {
    return this.request('GET', path);
  }
  post(path: string, body: Record<string, string | string[]>, headers: Record<string, string> = {}) {
    return this.request('POST', path, body, headers);
  }
  /** The CSRF token a page's forms carry. */
  formToken(html: string): string {
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (!m) throw new Error(`no CSRF field in: ${html.slice(0, 300)}`);
    return m[1]!;
  }
  async login(email: string, password = PASSWORD): Promise<Page> {
    const form = await this.get('/portal/login');
    return this.post('/portal/login', { _csrf: this.formToken(form.text), email, password });
  }
  /** Submits a form on `pagePath` with the page's own token. */
  async submit(pagePath: string, action: string, fields: Record<string, string | string[]>) {
    const page = await this.get(pagePath);
    return this.post(action, { _csrf: this.formToken(page.text), ...fields });
  }
}

export { ADMIN_TOKEN };

/** The 6-digit code of a TOTP secret (base32) at `at` (ms): `Date.now() + 30_000` is the next step's. */
export function totpCode(secret: string, at = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at });
}

/**
 * Turns two-factor sign-in on for a logged-in client: starts the set-up, reads the setup key,
 * confirms with the current code. Returns the secret and the ten recovery codes shown once.
 */
export async function enrolTwoFactor(
  client: PortalClient,
  password = PASSWORD,
): Promise<{ secret: string; codes: string[] }> {
  const started = await client.submit('/portal/account/security', '/portal/account/security/two-factor/start', {});
  if (started.status !== 303) throw new Error(`start: ${started.status}`);
  const setup = await client.get('/portal/account/security');
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec(setup.text)?.[1];
  if (!secret) throw new Error(`no setup key in: ${setup.text.slice(0, 300)}`);
  recordSecret('totp-secret', secret);
  const on = await client.post('/portal/account/security/two-factor/confirm', {
    _csrf: client.formToken(setup.text),
    password,
    code: totpCode(secret),
  });
  if (on.status !== 303) throw new Error(`confirm: ${on.status} ${on.text.slice(0, 300)}`);
  const shown = await client.get(on.headers.get('location')!.replace(/^https?:\/\/[^/]+/, ''));
  const codes = /<pre id="recovery-codes">([^<]*)<\/pre>/.exec(shown.text)?.[1]?.split('\n') ?? [];
  for (const c of codes) recordSecret('recovery-code', c);
  return { secret, codes };
}
