// What the emulated provider accepts: media types and sizes, and sliding windows for its rate limits.

const MB = 1024 * 1024;
/** The provider's accepted media types and sizes (images 5 MB, documents 100 MB, audio and video 16 MB, stickers 500 KB). */
export const MEDIA_LIMITS: Record<string, number> = {
  'image/jpeg': 5 * MB,
  'image/png': 5 * MB,
  'text/plain': 100 * MB,
  'application/pdf': 100 * MB,
  'application/msword': 100 * MB,
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 100 * MB,
  'application/vnd.ms-excel': 100 * MB,
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 100 * MB,
  'application/vnd.ms-powerpoint': 100 * MB,
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 100 * MB,
  'audio/aac': 16 * MB,
  'audio/amr': 16 * MB,
  'audio/mpeg': 16 * MB,
  'audio/mp4': 16 * MB,
  'audio/ogg': 16 * MB,
  'video/mp4': 16 * MB,
  'video/3gpp': 16 * MB,
  'image/webp': 500 * 1024,
};

/** Sliding one-second windows per key, for throughput and pair-rate limits. */
export function createWindows() {
  const windows = new Map<string, number[]>();
  return {
    take(key: string, limit: number, windowMs: number): boolean {
      const now = Date.now();
      const w = (windows.get(key) ?? []).filter((t) => now - t < windowMs);
      if (w.length >= limit) {
        windows.set(key, w);
        return false;
      }
      w.push(now);
      windows.set(key, w);
      return true;
    },
  };
}
