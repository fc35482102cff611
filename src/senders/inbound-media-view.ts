// What the API shows of an inbound message's file (decision 0034): its fetch state, type, size and
// last error, read with the message (`media` on inbound messages).

export type InboundMediaState = 'pending' | 'fetched' | 'failed' | 'skipped_too_large' | 'skipped_type';

/** What the API shows of a message's file (`media` on an inbound message), or null. */
export type InboundMediaView = {
  state: InboundMediaState;
  mimeType: string | null;
  size: number | null;
  filename: string | null;
  sha256: string | null;
  attempts: number;
  error: string | null;
  fetchedAt: string | null;
};

/** The columns a read joins (`LEFT JOIN inbound_media f ON f.inbound_message_id = i.id`). */
export const MEDIA_COLUMNS = `f.id AS media_row_id, f.state AS media_state, f.mime_type AS media_mime_type,
  f.size_bytes AS media_size, f.filename AS media_filename, f.sha256 AS media_sha256, f.attempts AS media_attempts,
  f.last_error AS media_error, f.fetched_at AS media_fetched_at`;

export function mediaView(r: Record<string, unknown>): InboundMediaView | null {
  if (!r.media_state) return null;
  return {
    state: r.media_state as InboundMediaState,
    mimeType: (r.media_mime_type as string | null) ?? null,
    size: r.media_size === null || r.media_size === undefined ? null : Number(r.media_size),
    filename: (r.media_filename as string | null) ?? null,
    sha256: (r.media_sha256 as string | null) ?? null,
    attempts: Number(r.media_attempts),
    error: (r.media_error as string | null) ?? null,
    fetchedAt: r.media_fetched_at instanceof Date ? r.media_fetched_at.toISOString() : null,
  };
}
