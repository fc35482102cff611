import { describe, expect, it } from 'vitest';

import { isReplyWindowOpen, REPLY_WINDOW_MS, replyWindowExpiresAt } from './reply-window.js';

describe('reply window', () => {
  const last = new Date('2026-11-20T10:00:00.000Z');
  it('expires exactly 24 h after the last inbound message, and is closed at that instant', () => {
    expect(replyWindowExpiresAt(last)?.toISOString()).toBe('2026-11-21T10:00:00.000Z');
    expect(isReplyWindowOpen(last, new Date(last.getTime() + REPLY_WINDOW_MS - 1))).toBe(true);
    expect(isReplyWindowOpen(last, new Date(last.getTime() + REPLY_WINDOW_MS))).toBe(false);
    expect(isReplyWindowOpen(last, last)).toBe(true);
  });
  it('is closed for a number that never wrote', () => {
    expect(replyWindowExpiresAt(null)).toBeNull();
    expect(isReplyWindowOpen(null, new Date())).toBe(false);
  });
});
