// Portal pages read their query string through one typed reader (src/http/portal/input.ts): a
// parameter given twice, which the parser turns into an array, is read as absent instead of
// reaching code that expects text (before, the messages filter called trim() on it: a 500).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTenant, type Service, startService } from './support/harness.js';
import { createPortalUser, PortalClient } from './support/portal.js';

describe('portal query parameters', () => {
  let svc: Service;
  let owner: PortalClient;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
    const t = await createTenant(svc.url, { plan: 'pro' });
    await createPortalUser(svc.url, t.customerId, 'query@example.com');
    owner = new PortalClient(svc.url);
    expect((await owner.login('query@example.com')).status).toBe(303);
  });
  afterAll(async () => svc?.stop());

  it('reads a repeated parameter as absent (the page answers, unfiltered) rather than failing', async () => {
    const res = await owner.get('/portal/messages?status=queued&status=sent&externalId=a&externalId=b');
    expect(res.status).toBe(200);
    expect(res.text).not.toMatch(/role="alert"/);
    expect((await owner.get('/portal/inbox?from=1&from=2')).status).toBe(200);
  });

  it('still reads a single parameter (an unknown status is a validation error on the page)', async () => {
    const res = await owner.get('/portal/messages?status=nonsense');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/must be one of/);
  });
});
