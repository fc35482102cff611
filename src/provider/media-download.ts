// Downloading a received file from the URL the provider's GET /{media-id} gave: with the account's
// bearer token, so only to the provider's own hosts (its lookaside CDN, or the configured base
// URL's origin, e.g. the emulator), never following a redirect, and never more than maxBytes.
import { type Agent, request } from 'undici';

import type { ProviderObserver } from './cloud-api.js';

export type DownloadOutcome =
  | { ok: true; data: Buffer; contentType: string | null }
  | {
      ok: false;
      /** `too_large`: over maxBytes (by Content-Length or while reading); `transient`: worth another try. */
      reason: 'too_large' | 'transient' | 'permanent';
      httpStatus: number | null;
      summary: string;
    };

/** The provider's hosts that serve received files (https only). */
const PROVIDER_MEDIA_HOSTS = ['fbsbx.com', 'facebook.com', 'fbcdn.net', 'whatsapp.net'];

/** Whether a media URL the provider gave may receive the account's token. */
export function trustedMediaUrl(url: string, providerBaseUrl: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.origin === new URL(providerBaseUrl).origin) return true;
  return u.protocol === 'https:' && PROVIDER_MEDIA_HOSTS.some((h) => u.hostname === h || u.hostname.endsWith(`.${h}`));
}

export async function downloadWithToken(
  agent: Agent,
  url: string,
  accessToken: string,
  maxBytes: number,
  timeoutMs: number,
  observe: ProviderObserver | undefined,
): Promise<DownloadOutcome> {
  const started = performance.now();
  try {
    return await downloadOnce(agent, url, accessToken, maxBytes, timeoutMs);
  } finally {
    observe?.request('media_download', (performance.now() - started) / 1000);
  }
}

async function downloadOnce(
  agent: Agent,
  url: string,
  accessToken: string,
  maxBytes: number,
  timeoutMs: number,
): Promise<DownloadOutcome> {
  let res;
  try {
    res = await request(url, {
      method: 'GET',
      dispatcher: agent,
      headers: { authorization: `Bearer ${accessToken}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch {
    return { ok: false, reason: 'transient', httpStatus: null, summary: 'the file could not be downloaded (network)' };
  }
  const status = res.statusCode;
  if (status < 200 || status >= 300) {
    res.body.resume();
    // 404: the URL expired (5 minutes); a new GET /{media-id} gives a fresh one. 401/403 may be a
    // token problem the account prober fixes. Only 400 and 410 are taken as final.
    const permanent = status === 400 || status === 410;
    return {
      ok: false,
      reason: permanent ? 'permanent' : 'transient',
      httpStatus: status,
      summary: `the file download answered HTTP ${status}`,
    };
  }
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.body.destroy();
    return { ok: false, reason: 'too_large', httpStatus: status, summary: `the file is ${declared} bytes` };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        res.body.destroy();
        return { ok: false, reason: 'too_large', httpStatus: status, summary: `the file is over ${maxBytes} bytes` };
      }
      chunks.push(chunk as Buffer);
    }
  } catch {
    return { ok: false, reason: 'transient', httpStatus: status, summary: 'the file download was cut off' };
  }
  const type = res.headers['content-type'];
  return { ok: true, data: Buffer.concat(chunks), contentType: typeof type === 'string' ? type : null };
}
