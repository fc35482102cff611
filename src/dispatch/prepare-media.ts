// The worker's media step, before a live send with a file (image, document, audio, video, sticker,
// or an interactive message's file header) is booked into its account's
// pacing slots: get the file (the upload from the media store, or the URL through the guarded
// outbound client), check it against the media rules, upload it to the account's number, and
// remember the provider's media id on the message. The send itself then goes by that id.
import type { SendAccount } from '../accounts/send-accounts.js';
import type { Db } from '../db/db.js';
import type { Claimed } from '../lifecycle/claim.js';
import { recordProviderMediaId } from '../lifecycle/media-lifecycle.js';
import * as transition from '../lifecycle/transitions.js';
import type { MediaStore } from '../media/media-store.js';
import { detectType, isAnimatedWebp, maxBytesOf, mediaMismatch } from '../media/media-type.js';
import type { OutboundClient } from '../outbound/outbound-client.js';
import type { ProviderClient, UploadOutcome } from '../provider/cloud-api.js';
import { lastUrlSegment, type ProviderMediaRef } from '../provider/payload.js';
import { backoffDelayMs, SEND_SCHEDULE_MS } from '../shared/backoff.js';
import { contentMedia, type MediaKind } from '../shared/content.js';
import { SEND_ERROR_CODES } from '../shared/vocab.js';
import { type AttemptResult, recordAttempt } from './live-send.js';

export const MAX_MEDIA_REDIRECTS = 3;
/** How long a broadcast's fetched URL is reused for its other messages (provider ids last 30 days). */
const BROADCAST_URL_TTL_MS = 3600_000;

export type MediaPreparer = ReturnType<typeof createMediaPreparer>;

/** Whether a live message still needs its media step. */
export function needsMediaStep(m: Claimed): boolean {
  return contentMedia(m.content) !== null && m.providerMedia === null;
}

/** A message's media given by URL. */
type UrlMedia = { kind: MediaKind; url: string };

type PreparerDeps = {
  db: Db;
  store: MediaStore;
  provider: ProviderClient;
  outbound: OutboundClient;
  retryTimeScale: number;
  fetchTimeoutMs: number;
};

type Preparer = PreparerDeps & {
  /** One upload at a time per (file, number) in this process: a broadcast of one upload uploads it once. */
  uploading: Map<string, Promise<UploadOutcome | 'gone'>>;
  /** A broadcast's URL is fetched and uploaded once per number and process, not once per message. */
  broadcastUrls: Map<string, { at: number; result: Promise<AttemptResult | { providerMediaId: string }> }>;
};

export function createMediaPreparer(deps: PreparerDeps) {
  const p: Preparer = { ...deps, uploading: new Map(), broadcastUrls: new Map() };
  return {
    /** The message's media step; never throws (a failure becomes the message's outcome). */
    async prepare(m: Claimed, account: SendAccount): Promise<AttemptResult> {
      const media = contentMedia(m.content);
      if (m.mediaId !== null) return fromUpload(p, m, account, m.mediaId);
      const ref = media?.ref;
      const kind = media?.kind ?? 'document';
      if (ref?.url)
        return m.broadcastId !== null
          ? fromBroadcastUrl(p, m, account, { kind, url: ref.url })
          : fromUrl(p, m, account, { kind, url: ref.url });
      return unavailable(m, 'the message has no media to send');
    },
  };
}

const unavailable = (m: Claimed, message: string): AttemptResult => ({
  transition: transition.failed(m, new Date(), { code: SEND_ERROR_CODES.MEDIA_UNAVAILABLE, message }, false),
  verdict: null,
});

/** A fetch that may succeed later: retried with the send schedule while attempts remain. */
const retryLater = (m: Claimed, message: string, retryTimeScale: number): AttemptResult => {
  const attempt = m.attemptCount + 1;
  const now = new Date();
  const error = { code: SEND_ERROR_CODES.MEDIA_UNAVAILABLE, message };
  if (attempt >= m.maxAttempts) return { transition: transition.failed(m, now, error, true), verdict: null };
  const delay = backoffDelayMs(attempt, SEND_SCHEDULE_MS, { scale: retryTimeScale });
  return { transition: transition.retry(m, now, error, new Date(now.getTime() + delay)), verdict: null };
};

const ready = (m: Claimed, providerMedia: ProviderMediaRef): AttemptResult => ({
  transition: transition.mediaReady(m, new Date(), providerMedia),
  verdict: null,
});

async function fromUpload(p: Preparer, m: Claimed, account: SendAccount, mediaId: string): Promise<AttemptResult> {
  const [file] = await p.db.query<{ filename: string; mimetype: string; provider_ids: Record<string, string> }>(
    'SELECT filename, mimetype, provider_ids FROM media_files WHERE id = $1',
    [mediaId],
  );
  if (!file) return unavailable(m, 'the uploaded file was deleted before the message was sent');
  const known = file.provider_ids[account.phoneNumberId!];
  if (known) return ready(m, { id: known, filename: file.filename });
  const key = `${mediaId}:${account.phoneNumberId}`;
  let upload = p.uploading.get(key);
  if (!upload) {
    upload = (async (): Promise<UploadOutcome | 'gone'> => {
      const data = await p.store.get(mediaId);
      if (!data) return 'gone';
      const outcome = await p.provider.uploadMedia(
        { phoneNumberId: account.phoneNumberId!, accessToken: account.accessToken! },
        { data, mimetype: file.mimetype, filename: file.filename },
      );
      if (outcome.ok) {
        await recordProviderMediaId(p.db, mediaId, account.phoneNumberId!, outcome.providerMediaId);
      }
      return outcome;
    })().finally(() => p.uploading.delete(key));
    p.uploading.set(key, upload);
  }
  const outcome = await upload;
  if (outcome === 'gone') return unavailable(m, 'the uploaded file was deleted before the message was sent');
  if (outcome.ok) return ready(m, { id: outcome.providerMediaId, filename: file.filename });
  return uploadFailed(p, m, outcome);
}

/**
 * A failed upload is retried on the send schedule, even one that may have reached the provider:
 * an upload sends nothing to the recipient, so a second one is harmless (decision 0061).
 */
const uploadFailed = (p: Preparer, m: Claimed, outcome: Extract<UploadOutcome, { ok: false }>) =>
  recordAttempt(m, { ...outcome, sent: false }, new Date(), { retryTimeScale: p.retryTimeScale, confirmWaitMs: 0 });

/** A broadcast message's URL: the first message's outcome serves the others (success only). */
async function fromBroadcastUrl(
  p: Preparer,
  m: Claimed,
  account: SendAccount,
  media: UrlMedia,
): Promise<AttemptResult> {
  const key = `${m.broadcastId}:${account.phoneNumberId}`;
  const now = Date.now();
  for (const [k, v] of p.broadcastUrls) if (now - v.at > BROADCAST_URL_TTL_MS) p.broadcastUrls.delete(k);
  let entry = p.broadcastUrls.get(key);
  if (!entry) {
    const result = fromUrl(p, m, account, media).then((r) =>
      r.transition.providerMedia ? { providerMediaId: r.transition.providerMedia.id } : r,
    );
    entry = { at: now, result };
    p.broadcastUrls.set(key, entry);
    // Failures are not shared: the next message tries again.
    void result.then((r) => {
      if (!('providerMediaId' in r)) p.broadcastUrls.delete(key);
    });
    return result.then((r) => ('providerMediaId' in r ? ready(m, { id: r.providerMediaId }) : r));
  }
  const shared = await entry.result;
  return 'providerMediaId' in shared ? ready(m, { id: shared.providerMediaId }) : fromUrl(p, m, account, media);
}

async function fromUrl(p: Preparer, m: Claimed, account: SendAccount, media: UrlMedia): Promise<AttemptResult> {
  const { kind, url } = media;
  const fetched = await p.outbound.fetchMedia(url, {
    maxBytes: maxBytesOf(kind),
    timeoutMs: p.fetchTimeoutMs,
    maxRedirects: MAX_MEDIA_REDIRECTS,
  });
  if (!fetched.ok) {
    const message = `the media URL could not be fetched: ${fetched.reason}`;
    return fetched.permanent ? unavailable(m, message) : retryLater(m, message, p.retryTimeScale);
  }
  // Named after the URL as given (as the send's default file name is); typed by the URL reached.
  const name = lastUrlSegment(url) ?? 'file';
  const mimetype = detectType(fetched.data, fetched.contentType, lastUrlSegment(fetched.url));
  const animated = kind === 'sticker' ? isAnimatedWebp(fetched.data) : undefined;
  const mismatch = mediaMismatch(kind, mimetype, fetched.data.length, animated);
  if (mismatch) return unavailable(m, `the media URL's file cannot be sent: ${mismatch}`);
  const outcome = await p.provider.uploadMedia(
    { phoneNumberId: account.phoneNumberId!, accessToken: account.accessToken! },
    { data: fetched.data, mimetype, filename: name },
  );
  if (outcome.ok) return ready(m, { id: outcome.providerMediaId });
  return uploadFailed(p, m, outcome);
}
