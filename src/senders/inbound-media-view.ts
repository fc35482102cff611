// The fetch of an inbound message's file (decision 0034), shown on the inbox's messages inside
// `media` beside the provider's description (decision 0033): its state, size, attempts, last error.

export type InboundMediaState = 'pending' | 'fetched' | 'failed' | 'skipped_too_large' | 'skipped_type';

export type InboundMediaFetch = {
  state: InboundMediaState;
  size: number | null;
  attempts: number;
  error: string | null;
  fetchedAt: string | null;
};

/** The columns a read joins (`LEFT JOIN inbound_media f ON f.inbound_message_id = i.id`). */
export const MEDIA_COLUMNS = `f.state AS media_state, f.size_bytes AS media_size, f.attempts AS media_attempts,
  f.last_error AS media_error, f.fetched_at AS media_fetched_at`;

/** The columns MEDIA_COLUMNS reads (all null for a message without a file). */
export type InboundMediaColumns = {
  media_state: InboundMediaState | null;
  media_size: string | number | null;
  media_attempts: number | null;
  media_error: string | null;
  media_fetched_at: Date | null;
};

function fetchOf(r: InboundMediaColumns): InboundMediaFetch | null {
  if (!r.media_state) return null;
  return {
    state: r.media_state,
    size: r.media_size === null || r.media_size === undefined ? null : Number(r.media_size),
    attempts: Number(r.media_attempts),
    error: (r.media_error as string | null) ?? null,
    fetchedAt: r.media_fetched_at instanceof Date ? r.media_fetched_at.toISOString() : null,
  };
}

/** The message's `media` (the provider's description) with the fetch of its file, when there is one. */
export function withFetch<T extends object>(described: T | null, r: InboundMediaColumns): T | null {
  const fetched = fetchOf(r);
  return described && fetched ? { ...described, ...fetched } : described;
}
