// Issue 21, item 1: one tenant's regular expression must not stall the others. Patterns whose
// repetitions or compiled program exceed the limits are refused (API and portal, naming
// condition.pattern); accepted ones run in the rule matcher's worker on the first 4,096
// characters; the portal's rule check is for owners and throttled. Real server, real database.
import crypto from 'node:crypto';
import http from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RULE_CHECKS_PER_MINUTE } from '../src/http/portal/inbox-routes.js';
import { MAX_MATCH_TEXT } from '../src/inbound/forwarding-match.js';
import { APP_SECRET, startLiveService } from './support/emulator.js';
import { call, createAccount, createKey, eventually, type Service } from './support/harness.js';
import { createPortalUser, PortalClient } from './support/portal.js';
import { metricSum } from './support/prometheus-text.js';

/** The issue's pattern: three 1,000-fold repetitions of a four-way alternation, then `z`. */
const ISSUE_PATTERN = `${'(?:\\w|\\d|[a-z]|\\pL){1000}'.repeat(3)}z`;
/** An accepted pattern that is costly to match: 100 repetitions, a DFA state per character. */
const WORST = '(?:\\pL|\\pN)*\\pL(?:\\pL|\\pN){100}!';
/** 4,096 characters alternating letters and digits at random: WORST never matches, at full cost. */
function adversarialText(length = MAX_MATCH_TEXT): string {
  let seed = 11;
  return Array.from({ length }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % 2 ? 'ж' : '٣';
  }).join('');
}

describe('regular expressions: bounded work', () => {
  let svc: Service;
  let stop: () => Promise<void>;
  let receiver: http.Server;
  let forwardUrl: string;
  const got: { rule: string; text: string }[] = [];
  let tenant: { customerId: string; phoneNumberId: string; key: string };

  beforeAll(async () => {
    ({ svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
    receiver = http.createServer((req, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
          got.push({ rule: String(req.headers['x-svc-forward-rule']), text: JSON.parse(body).text });
          res.writeHead(204).end();
        });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    forwardUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/forward`;
    const c = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Regex', plan: 'pro', defaultCountry: 'US' },
    });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    await createAccount(svc.url, c.body.id, { official: { phoneNumberId, wabaId: 'w', accessToken: 't' } });
    tenant = { customerId: c.body.id, phoneNumberId, key: await createKey(svc.url, c.body.id, {}) };
    await createPortalUser(svc.url, tenant.customerId, 'owner-rx@example.com');
    await createPortalUser(svc.url, tenant.customerId, 'owner-rx2@example.com');
    await createPortalUser(svc.url, tenant.customerId, 'viewer-rx@example.com', 'viewer');
  });
  afterAll(async () => {
    receiver?.close();
    await stop?.();
  });

  const createRule = (pattern: string, type = 'regex') =>
    call(svc.url, 'POST', '/forwarding-rules', {
      key: tenant.key,
      body: { condition: { type, pattern }, destination: { type: 'http', url: forwardUrl } },
    });

  it('refuses the issue pattern with 400 naming condition.pattern, on create and on update', async () => {
    const created = await createRule(ISSUE_PATTERN);
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({
      error: 'validation_error',
      details: [{ path: 'condition.pattern', message: expect.stringMatching(/at most 100 copies/) }],
    });
    const ok = await createRule('order #\\d+');
    expect(ok.status).toBe(201);
    const patched = await call(svc.url, 'PATCH', `/forwarding-rules/${ok.body.id}`, {
      key: tenant.key,
      body: { condition: { type: 'regex', pattern: ISSUE_PATTERN } },
    });
    expect(patched).toMatchObject({ status: 400, body: { details: [{ path: 'condition.pattern' }] } });
    expect((await call(svc.url, 'DELETE', `/forwarding-rules/${ok.body.id}`, { key: tenant.key })).status).toBe(204);
  });

  it('accepts a pattern compiling to the limit (500 instructions) and refuses one more', async () => {
    const at = await createRule(`${'\\pL{100}'.repeat(4)}\\pL{98}`);
    expect(at.status).toBe(201);
    const over = await createRule(`${'\\pL{100}'.repeat(4)}\\pL{99}`);
    expect(over).toMatchObject({
      status: 400,
      body: {
        details: [{ path: 'condition.pattern', message: expect.stringMatching(/501 instructions, at most 500/) }],
      },
    });
    expect((await call(svc.url, 'DELETE', `/forwarding-rules/${at.body.id}`, { key: tenant.key })).status).toBe(204);
  });

  it('matches inbound with the worst accepted patterns, on the first 4,096 characters only', async () => {
    // The early rule first: rules run in their order, and on a loaded machine the worst patterns may
    // run past the 200 ms budget, which stops the job but keeps what it found before.
    const early = await createRule('^early-\\d+');
    const worst = [];
    for (let i = 0; i < 5; i++) worst.push(await createRule(WORST));
    expect(worst.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const late = await createRule('late-marker', 'contains');
    const lateRegex = await createRule('late-\\w+');
    const text = `early-1 ${adversarialText()}`.slice(0, MAX_MATCH_TEXT) + ` late-marker ${adversarialText(5000)}`;
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'w',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { phone_number_id: tenant.phoneNumberId },
                messages: [
                  {
                    from: '16505551700',
                    id: `wamid.rx${Date.now()}`,
                    timestamp: String(Math.floor(Date.now() / 1000)),
                    type: 'text',
                    text: { body: text },
                  },
                ],
              },
            },
          ],
        },
      ],
    });
    const forwardingDone = () => metricSum(svc.url, 'chatgate_inbound_forwarding_total');
    const before = await forwardingDone();
    const delivered = await call(svc.url, 'POST', '/provider/webhooks/app', {
      body,
      headers: {
        'x-hub-signature-256': `sha256=${crypto.createHmac('sha256', APP_SECRET).update(body).digest('hex')}`,
      },
    });
    expect(delivered.status).toBe(200);
    // The service keeps answering while the rules run.
    expect((await call(svc.url, 'GET', '/healthz')).status).toBe(200);
    try {
      // Five worst-case patterns over 4,096 characters each: seconds of CPU on a loaded machine
      // (bench/regex.ts measures it); the wait is only where the test gives up.
      await eventually(async () => got.length >= 1, 60_000);
      // Its forwarding finished (every matched rule's request made): no other rule will still forward it.
      await eventually(async () => (await forwardingDone()) >= before + 1, 60_000);
      // Only the rule whose match lies in the first 4,096 characters forwarded the message.
      expect(got.map((g) => g.rule)).toEqual([early.body.id]);
      expect(got[0]!.text).toBe(text);
    } finally {
      // Removed whatever happened above, so the tests after this one start with no rules.
      for (const r of [...worst, early, late, lateRegex])
        expect((await call(svc.url, 'DELETE', `/forwarding-rules/${r.body.id}`, { key: tenant.key })).status).toBe(204);
    }
  }, 150_000);

  describe('the portal rule check', () => {
    const fields = (token: string, pattern: string, sample: string) => ({
      _csrf: token,
      name: '',
      conditionType: 'regex',
      pattern,
      url: forwardUrl,
      sample,
    });

    it('is refused to a viewer with the read-only answer', async () => {
      const v = new PortalClient(svc.url);
      expect((await v.login('viewer-rx@example.com')).status).toBe(303);
      const inbox = await v.get('/portal/inbox');
      expect(inbox.text).not.toContain('Check the sample');
      const res = await v.post('/portal/inbox/rules/check', fields(v.formToken(inbox.text), 'a', 'a'));
      expect(res.status).toBe(403);
      expect(res.text).toContain('Read only');
    });

    it('refuses the issue pattern with 400 and the error beside the field, in the check and the create form', async () => {
      const o = new PortalClient(svc.url);
      expect((await o.login('owner-rx@example.com')).status).toBe(303);
      const token = o.formToken((await o.get('/portal/inbox')).text);
      for (const action of ['/portal/inbox/rules/check', '/portal/inbox/rules']) {
        const res = await o.post(action, fields(token, ISSUE_PATTERN, 'x'.repeat(100)));
        expect(res.status, action).toBe(400);
        // In the customer's words, never the raw code (issue #27.5).
        expect(res.text).not.toContain('validation_error');
        expect(res.text).toMatch(/aria-invalid="true" aria-describedby="r-pattern-error"/);
        expect(res.text).toMatch(/<p id="r-pattern-error" class="field-error" role="alert">[^<]*at most 100 copies/);
      }
      expect((await call(svc.url, 'GET', '/forwarding-rules', { key: tenant.key })).body.forwardingRules).toEqual([]);
    });

    it('keeps /healthz answering while ten checks of the worst accepted pattern run, then throttles', async () => {
      const o = new PortalClient(svc.url);
      expect((await o.login('owner-rx2@example.com')).status).toBe(303);
      const token = o.formToken((await o.get('/portal/inbox')).text);
      const order: string[] = [];
      const checks = Array.from({ length: 10 }, (_, i) =>
        o
          .post('/portal/inbox/rules/check', fields(token, WORST, adversarialText()), { 'hx-request': 'true' })
          .then((r) => {
            order.push(`check${i}`);
            return r;
          }),
      );
      const health = call(svc.url, 'GET', '/healthz').then((r) => {
        order.push('healthz');
        return r;
      });
      const [answers, h] = await Promise.all([Promise.all(checks), health]);
      expect(h.status).toBe(200);
      for (const a of answers) {
        expect(a.status).toBe(200);
        // Not a match; on a loaded machine the worker may also stop it at its budget (not a match either).
        expect(a.text).toMatch(/The sample does not match this rule\.|The check ran out of its time budget/);
      }
      // Eleven answers: the health check was not lost behind the ten checks. (How soon it came is
      // the bench's business, bench/regex.ts: no timing here.)
      expect(order).toHaveLength(11);

      // The same user's checks are throttled: the ten above and these make 30 a minute.
      let allowed = 0;
      let refused: Awaited<ReturnType<typeof o.post>> | null = null;
      for (let i = 0; i < RULE_CHECKS_PER_MINUTE && !refused; i++) {
        const r = await o.post('/portal/inbox/rules/check', fields(token, 'order', 'my order'));
        if (r.status === 429) refused = r;
        else {
          expect(r.status).toBe(200);
          expect(r.text).toContain('The sample matches this rule.');
          allowed++;
        }
      }
      expect(allowed).toBe(RULE_CHECKS_PER_MINUTE - 10);
      expect(refused?.text).toContain(`at most ${RULE_CHECKS_PER_MINUTE} checks a minute`);
      expect(refused?.text).not.toContain('check_throttled'); // no raw code in the portal (issue #27.5)
      expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
      const fragment = await o.post('/portal/inbox/rules/check', fields(token, 'order', 'my order'), {
        'hx-request': 'true',
      });
      expect(fragment.status).toBe(200);
      expect(fragment.text).toContain(`at most ${RULE_CHECKS_PER_MINUTE} checks a minute`);
    });
  });
});
