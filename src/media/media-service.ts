// Uploaded media: saving a file (type detection, the pending-files limit), and checking a
// `mediaId` when a send refers to it. The lifecycle (used, released, expired) is in media-lifecycle.ts.
import crypto from 'node:crypto';

import { lockCustomer } from '../customers/customer-service.js';
import type { Db } from '../db/db.js';
import { insertMediaFile } from '../lifecycle/media-lifecycle.js';
import { contentMedia, type MediaKind } from '../shared/content.js';
import { errors } from '../shared/errors.js';
import type { MediaStore } from './media-store.js';
import { detectType, isAnimatedWebp, MAX_STATIC_STICKER_BYTES, mediaMismatch } from './media-type.js';

/** More than this many unused uploads: 429 media_pending_limit. */
export const MAX_PENDING_MEDIA = 200;

export type MediaUpload = { mediaId: string; mimetype: string; sizeBytes: number; filename: string; expiresAt: string };

/** A message content, which may name an upload (its file, or an interactive message's header). */
export type MediaContent = Parameters<typeof contentMedia>[0];

export type MediaForSend = { id: string; filename: string; mimetype: string; sizeBytes: number };

/** An upload that is neither used by a message nor expired (the unused lifetime is over). */
const LIVE = '(used_at IS NOT NULL OR expires_at > now())';

export type MediaService = ReturnType<typeof createMediaService>;

export function createMediaService(deps: { db: Db; store: MediaStore; unusedTtlSeconds: number }) {
  const { db, store } = deps;

  const pending = async (q: Pick<Db, 'query'>, customerId: string) => {
    const [row] = await q.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM media_files WHERE customer_id = $1 AND used_at IS NULL AND expires_at > now()',
      [customerId],
    );
    return row?.n ?? 0;
  };

  return {
    /** Refuses early (before the body is read) when the customer is already at the limit. */
    async assertRoomForUpload(customerId: string): Promise<void> {
      if ((await pending(db, customerId)) >= MAX_PENDING_MEDIA) throw errors.mediaPendingLimit(MAX_PENDING_MEDIA);
    },

    async save(
      customerId: string,
      file: { data: Buffer; filename: string; declaredType: string | null },
    ): Promise<MediaUpload> {
      const mimetype = detectType(file.data, file.declaredType, file.filename);
      const id = crypto.randomUUID();
      const sha256 = crypto.createHash('sha256').update(file.data).digest('hex');
      const row = await db.transaction(async (tx) => {
        // The customer row serialises uploads, so the limit holds under concurrency.
        await lockCustomer(tx, customerId);
        if ((await pending(tx, customerId)) >= MAX_PENDING_MEDIA) throw errors.mediaPendingLimit(MAX_PENDING_MEDIA);
        const r = await insertMediaFile(tx, [
          id,
          customerId,
          file.filename,
          mimetype,
          file.data.length,
          sha256,
          deps.unusedTtlSeconds,
        ]);
        await store.put(tx, id, customerId, file.data);
        return r;
      });
      return {
        mediaId: id,
        mimetype,
        sizeBytes: file.data.length,
        filename: file.filename,
        expiresAt: new Date(row.expires_at).toISOString(),
      };
    },

    /**
     * The upload a message content uses (null when it uses none), checked. A repeat of a request
     * whose file is gone since (files are deleted once their messages are sent) is still a repeat,
     * or a conflict: `isRepeat` tells, and the insert decides.
     */
    async forContent(
      customerId: string,
      content: MediaContent,
      isRepeat: () => Promise<boolean>,
    ): Promise<string | null> {
      const media = contentMedia(content);
      const mediaId = media?.ref.mediaId;
      if (!media || mediaId === undefined) return null;
      try {
        return (await this.forSend(customerId, mediaId, media.kind)).id;
      } catch (err) {
        if (!(await isRepeat())) throw err;
        return mediaId.toLowerCase();
      }
    },

    /** The file a send refers to, or 422 invalid_media (missing, foreign, expired, deleted, wrong type). */
    async forSend(customerId: string, mediaId: string, kind: MediaKind): Promise<MediaForSend> {
      const [row] = await db.query<{ id: string; filename: string; mimetype: string; size_bytes: number }>(
        `SELECT id, filename, mimetype, size_bytes FROM media_files WHERE id = $1 AND customer_id = $2 AND ${LIVE}`,
        [mediaId.toLowerCase(), customerId],
      );
      if (!row) throw errors.invalidMedia('media_not_found');
      // Only a sticker over the static limit needs its bytes: it must be animated.
      const animated =
        kind === 'sticker' && row.size_bytes > MAX_STATIC_STICKER_BYTES
          ? isAnimatedWebp((await store.get(row.id)) ?? Buffer.alloc(0))
          : undefined;
      const mismatch = mediaMismatch(kind, row.mimetype, row.size_bytes, animated);
      if (mismatch) throw errors.invalidMedia('media_type_mismatch', mismatch);
      return { id: row.id, filename: row.filename, mimetype: row.mimetype, sizeBytes: row.size_bytes };
    },
  };
}
