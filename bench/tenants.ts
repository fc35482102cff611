// Customers for the bench, made through the operator API like an operator would. The pro plan
// allows 20,000 messages a month per customer and a run sends more than that, so the load is
// spread over several customers (one key and one account each) rather than touching the quota.
import crypto from 'node:crypto';

export const QUOTA_PER_CUSTOMER = 20_000;

async function admin<T>(url: string, token: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Creates `count` pro customers with one OFFICIAL account each; returns their live API keys. */
export async function createKeys(url: string, token: string, count: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const { id } = await admin<{ id: string }>(url, token, '/admin/customers', { name: `Bench ${i}`, plan: 'pro' });
    await admin(url, token, `/admin/customers/${id}/chat-accounts`, {
      type: 'OFFICIAL',
      phoneNumber: '+15550100200',
      displayName: 'x',
      official: { phoneNumberId: `bench${i}${crypto.randomBytes(4).toString('hex')}`, wabaId: 'w', accessToken: 't' },
    });
    keys.push((await admin<{ key: string }>(url, token, `/admin/customers/${id}/api-keys`, { sandbox: false })).key);
  }
  return keys;
}

/** Made-up keys for the baselines, which map each key to a customer id of their own. */
export const fakeKeys = (count: number) => Array.from({ length: count }, (_, i) => `bench-key-${i}`);
