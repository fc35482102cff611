// fetch for the @chatgate/client tests: every answer of our service is checked against its OpenAPI
// document (as call() does), so that a client test also proves the answers it reads are documented.
import { checkAgainstDocument } from './openapi-check.js';

export const checkedFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  const text = await res.clone().text();
  let body: unknown = text;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    /* not JSON */
  }
  await checkAgainstDocument(url.origin, init?.method ?? 'GET', url.pathname + url.search, {
    status: res.status,
    body,
    contentType: res.headers.get('content-type'),
  });
  return res;
};
