// The inbound media fetcher (decision 0034): a worker loop that claims due inbound files (SKIP
// LOCKED, under a lease) and fetches each from the provider with its account's token — GET
// /{media-id} for a fresh download URL, then the download — checks its type, size and SHA-256,
// and keeps the bytes in the media store. Transient failures (network, 5xx, 429, a cut download,
// a checksum mismatch) are tried again on a growing schedule; after INBOUND_MEDIA_MAX_ATTEMPTS,
// or when the next try would fall after the provider's media id expires (7 days), it is `failed`.
import crypto from 'node:crypto';

import type { Logger } from 'pino';

import { openAccessToken } from '../accounts/account-record.js';
import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import type { MediaStore } from '../media/media-store.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ProviderClient } from '../provider/cloud-api.js';
import { normalizeSha256, typeAllowed } from '../provider/parse-inbound-media.js';
import { backoffDelayMs } from '../shared/backoff.js';
import type { Sealer } from '../shared/crypto.js';
import { createWorkerLoop } from '../shared/worker-loop.js';
import {
  claimDueInboundMedia,
  type DueInboundMedia,
  INBOUND_MEDIA_READY,
  type InboundMediaOutcome,
  recordInboundMediaOutcome,
} from './inbound-media-store.js';

/** Delays after failed try 1, 2, …: about 52 hours in all, well inside the provider's 7 days. */
export const INBOUND_MEDIA_SCHEDULE_MS = [
  10_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000, 43_200_000, 86_400_000,
] as const;

/** Files fetched at once per process: each may hold up to INBOUND_MEDIA_MAX_BYTES in memory. */
const BATCH = 4;

export type InboundMediaOptions = {
  pollMs: number;
  maxBytes: number;
  types: readonly string[];
  maxAttempts: number;
  retryTimeScale: number;
  leaseSeconds: number;
};

type Attempt = Exclude<InboundMediaOutcome, { state: 'retry' }> | { state: 'retry'; error: string };
type Fetched = { data: Buffer; outcome: Extract<InboundMediaOutcome, { state: 'fetched' }> };

type Deps = {
  db: Db;
  log: Logger;
  sealer: Sealer;
  store: MediaStore;
  provider: Pick<ProviderClient, 'mediaInfo' | 'download'>;
  metrics: Pick<Metrics, 'inboundMediaFiles'>;
  options: InboundMediaOptions;
};

export function createInboundMediaFetcher(deps: Deps) {
  const { db, log, options } = deps;

  async function fetchOne(due: DueInboundMedia): Promise<void> {
    const tried = await attempt(deps, due);
    const outcome = 'data' in tried ? tried.outcome : decide(options, due, tried);
    const recorded = await retryTransient(() =>
      db.transaction(async (tx) => {
        if (!(await recordInboundMediaOutcome(tx, due, outcome))) return false;
        if ('data' in tried) await deps.store.put(tx, due.id, due.customerId, tried.data);
        return true;
      }),
    );
    if (!recorded) return;
    deps.metrics.inboundMediaFiles.inc({ result: outcome.state });
    if (outcome.state !== 'fetched')
      log.info({ inboundMediaId: due.id, state: outcome.state, error: outcome.error }, 'inbound file not fetched');
  }

  const loop = createWorkerLoop({
    name: 'inbound-media-fetcher',
    pollMs: options.pollMs,
    log,
    wakeOn: { db, channel: INBOUND_MEDIA_READY },
    async pass() {
      const due = await claimDueInboundMedia(db, BATCH, options.leaseSeconds);
      await Promise.all(
        due.map((d) =>
          fetchOne(d).catch((err: unknown) =>
            log.error({ err, inboundMediaId: d.id }, 'fetching an inbound file failed'),
          ),
        ),
      );
      return { didWork: due.length > 0 };
    },
  });
  return { start: () => loop.start(), stop: () => loop.stop() };
}

/** One try: never throws for the provider's answers (they become the outcome). */
async function attempt(deps: Deps, due: DueInboundMedia): Promise<Attempt | Fetched> {
  const { options } = deps;
  if (due.mimeType !== null && !typeAllowed(due.mimeType, options.types))
    return { state: 'skipped_type', error: `type ${due.mimeType} is not fetched (INBOUND_MEDIA_TYPES)` };
  const token = openAccessToken(deps.sealer, due.account);
  if (!token || !due.phoneNumberId)
    return { state: 'retry', error: 'the account has no usable phone number id or access token' };
  const account = { phoneNumberId: due.phoneNumberId, accessToken: token, accountId: due.accountId };
  const info = await deps.provider.mediaInfo(account, due.providerMediaId);
  if (!info.ok) {
    const s = info.httpStatus;
    const transient = s === null || s >= 500 || s === 429 || s === 401 || s === 403 || info.transport !== null;
    return { state: transient ? 'retry' : 'failed', error: `media lookup: ${info.summary}` };
  }
  const mimeType = info.mimeType ?? due.mimeType;
  if (mimeType === null || !typeAllowed(mimeType, options.types))
    return {
      state: 'skipped_type',
      error: `type ${mimeType ?? 'unknown'} is not fetched (INBOUND_MEDIA_TYPES)`,
      mimeType,
    };
  if (info.size !== null && info.size > options.maxBytes)
    return { state: 'skipped_too_large', error: tooLarge(options.maxBytes), mimeType, size: info.size };
  const file = await deps.provider.download(info.url, token, options.maxBytes);
  if (!file.ok) {
    if (file.reason === 'too_large')
      return { state: 'skipped_too_large', error: tooLarge(options.maxBytes), mimeType, size: info.size };
    return { state: file.reason === 'transient' ? 'retry' : 'failed', error: `download: ${file.summary}` };
  }
  const sha256 = crypto.createHash('sha256').update(file.data).digest('hex');
  const expected = due.sha256 ?? normalizeSha256(info.sha256);
  if (expected !== null && expected !== sha256)
    return { state: 'retry', error: 'download: the file does not match its SHA-256' };
  return { data: file.data, outcome: { state: 'fetched', mimeType, size: file.data.length, sha256 } };
}

/** The retry, or `failed` when tries are used up or the next would come after the media id expires. */
function decide(options: InboundMediaOptions, due: DueInboundMedia, a: Attempt): InboundMediaOutcome {
  if (a.state !== 'retry') return a;
  const tries = due.attempts + 1;
  const delayMs = backoffDelayMs(tries, INBOUND_MEDIA_SCHEDULE_MS, { scale: options.retryTimeScale });
  if (tries >= options.maxAttempts || Date.now() + delayMs >= due.giveUpAt.getTime())
    return { state: 'failed', error: `gave up after ${tries} attempts: ${a.error}` };
  return { state: 'retry', error: a.error, delayMs };
}

const tooLarge = (max: number) => `the file is larger than ${max} bytes (INBOUND_MEDIA_MAX_BYTES)`;
