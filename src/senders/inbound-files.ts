// Serving an inbound message's file (GET /inbound-messages/{id}/media, decision 0034): for the
// caller's customer, within its key's scope, never to a sandbox key (inbound files are live data;
// all three answer 404 as an unknown id does). A file not fetched yet is 409 media_not_ready; one
// that never will be (failed, too large, type not fetched) is 410 media_unavailable.
import { type Caller, readScope, requirePlan } from '../auth/caller.js';
import type { Db } from '../db/db.js';
import type { MediaStore } from '../media/media-store.js';
import { errors } from '../shared/errors.js';
import { scopeWhere, seesNothing } from '../shared/scope.js';

export type InboundFile = { data: Buffer; mimeType: string; size: number; filename: string | null };

export type InboundFiles = ReturnType<typeof createInboundFiles>;

export function createInboundFiles(deps: { db: Db; store: MediaStore }) {
  const { db, store } = deps;
  return {
    async open(caller: Caller, inboundMessageId: string): Promise<InboundFile> {
      requirePlan(caller, 'inbox');
      const scope = readScope(caller);
      if (seesNothing(scope, 'inbound_messages')) throw errors.inboundMessageNotFound();
      const params: unknown[] = [inboundMessageId.toLowerCase()];
      const where = ['i.id = $1::uuid', ...scopeWhere(scope, 'inbound_messages', params, 'i')];
      const [row] = await db.query<{
        media_id: string | null;
        state: string | null;
        mime_type: string | null;
        filename: string | null;
        attempts: number | null;
        last_error: string | null;
      }>(
        `SELECT f.id AS media_id, f.state, f.mime_type, f.filename, f.attempts, f.last_error
           FROM inbound_messages i LEFT JOIN inbound_media f ON f.inbound_message_id = i.id
          WHERE ${where.join(' AND ')}`,
        params,
      );
      if (!row) throw errors.inboundMessageNotFound();
      if (row.media_id === null) throw errors.inboundMediaNotFound();
      if (row.state === 'pending') throw errors.inboundMediaNotReady(Number(row.attempts), row.last_error);
      if (row.state !== 'fetched') throw errors.inboundMediaUnavailable(row.state!, row.last_error);
      const data = await store.get(row.media_id);
      // Purged between the two reads: as if the message were gone.
      if (!data) throw errors.inboundMessageNotFound();
      return { data, mimeType: row.mime_type ?? 'application/octet-stream', size: data.length, filename: row.filename };
    },
  };
}
