// Finds recorded secrets in log files in one pass per file, whatever the number of secrets: each
// secret is anchored on its last ANCHOR bytes, looked up by a rolling hash, and confirmed in full.
import crypto from 'node:crypto';
import fs from 'node:fs';

export type RecordedSecret = { kind: string; value: string; test: string };
export type Leak = { kind: string; test: string; fingerprint: string; file: string; count: number };

/** Shorter values cannot be told from ordinary text, so they are not recorded. */
export const MIN_SECRET_LENGTH = 8;
const ANCHOR = MIN_SECRET_LENGTH;
const BASE = 257;
const CHUNK = 8 * 1024 * 1024;

/** A short, one-way label for a secret, so a report can tell two apart without showing either. */
export const fingerprint = (value: string) => crypto.createHash('sha256').update(value).digest('hex').slice(0, 10);

/** The byte strings (as latin1) under which a secret can appear in a pino JSON log line. */
function spellings(value: string): string[] {
  const raw = Buffer.from(value, 'utf8').toString('latin1');
  const escaped = Buffer.from(JSON.stringify(value).slice(1, -1), 'utf8').toString('latin1');
  return raw === escaped ? [raw] : [raw, escaped];
}

function hashOf(s: string, from: number): number {
  let h = 0;
  for (let i = from; i < from + ANCHOR; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
  return h;
}

export function createScanner(secrets: RecordedSecret[], opts: { chunkBytes?: number } = {}) {
  const chunkBytes = opts.chunkBytes ?? CHUNK;
  type Needle = { text: string; secret: RecordedSecret };
  const byHash = new Map<number, Needle[]>();
  let longest = ANCHOR;
  for (const secret of secrets) {
    if (secret.value.length < MIN_SECRET_LENGTH) continue;
    for (const text of spellings(secret.value)) {
      const h = hashOf(text, text.length - ANCHOR);
      byHash.set(h, [...(byHash.get(h) ?? []), { text, secret }]);
      longest = Math.max(longest, text.length);
    }
  }
  let outFactor = 1; // BASE^(ANCHOR-1), to roll the oldest byte out
  for (let i = 1; i < ANCHOR; i++) outFactor = Math.imul(outFactor, BASE);

  /** Secrets found in `text` (latin1), each counted once per position where it ends. */
  function scanText(text: string, from: number, found: Map<RecordedSecret, number>) {
    if (text.length < ANCHOR) return;
    let h = hashOf(text, 0);
    for (let end = ANCHOR; ; end++) {
      const needles = byHash.get(h);
      if (needles && end > from) {
        for (const n of needles) {
          const start = end - n.text.length;
          if (start >= 0 && text.startsWith(n.text, start)) found.set(n.secret, (found.get(n.secret) ?? 0) + 1);
        }
      }
      if (end >= text.length) break;
      h = (Math.imul(h - Math.imul(text.charCodeAt(end - ANCHOR), outFactor), BASE) + text.charCodeAt(end)) | 0;
    }
  }

  return {
    /** Reads the file in chunks that overlap by the longest secret, so none hides at a boundary. */
    scanFile(file: string): Leak[] {
      if (byHash.size === 0) return [];
      const found = new Map<RecordedSecret, number>();
      const fd = fs.openSync(file, 'r');
      try {
        const buf = Buffer.alloc(chunkBytes);
        let carry = '';
        for (;;) {
          const n = fs.readSync(fd, buf, 0, chunkBytes, null);
          if (n === 0) break;
          const text = carry + buf.toString('latin1', 0, n);
          // Matches ending inside the carried-over part were counted with the previous chunk.
          scanText(text, carry.length, found);
          carry = text.slice(-(longest - 1));
        }
      } finally {
        fs.closeSync(fd);
      }
      return [...found].map(([s, count]) => ({
        kind: s.kind,
        test: s.test,
        fingerprint: fingerprint(s.value),
        file,
        count,
      }));
    },
  };
}
