// Hashing, secrets at rest (AES-256-GCM) and constant-time comparison.
import crypto from 'node:crypto';

export function sha256Hex(value: string | Buffer): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}

export function randomHex(bytes: number): string {
  return crypto.randomBytes(bytes).toString('hex');
}

/** Constant-time string equality (length is not secret here: both sides are fixed-format tokens or hashes). */
export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && crypto.timingSafeEqual(ba, bb);
}

export type Sealer = { seal(plain: string): string; open(sealed: string): string };

/**
 * Encrypts secrets at rest: "v1.<iv>.<tag>.<ciphertext>", all base64url.
 *
 * Workers open the same few sealed values (account tokens, endpoint secrets) on every batch, so
 * `open` keeps the last `cacheSize` results, keyed by the sealed text itself: sealing draws a
 * fresh IV, so a changed secret is a new key and the old entry is simply never hit again (and
 * ages out). Plaintexts stay in this process's memory only, as they do while in use; nothing
 * logs them.
 */
export function createSealer(key: Buffer, cacheSize = 10_000): Sealer {
  if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
  const secretKey = crypto.createSecretKey(key);
  const opened = new Map<string, string>();
  function open(sealed: string): string {
    const [v, iv, tag, ct] = sealed.split('.');
    if (v !== 'v1' || iv === undefined || tag === undefined || ct === undefined)
      throw new Error('unknown sealed format');
    const decipher = crypto.createDecipheriv('aes-256-gcm', secretKey, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
  return {
    seal(plain) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', secretKey, iv);
      const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), ct]
        .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const hit = opened.get(sealed);
      if (hit !== undefined) {
        // Least recently used first: a hit moves to the end.
        opened.delete(sealed);
        opened.set(sealed, hit);
        return hit;
      }
      const plain = open(sealed);
      if (cacheSize > 0) {
        opened.set(sealed, plain);
        if (opened.size > cacheSize) opened.delete(opened.keys().next().value!);
      }
      return plain;
    },
  };
}

/** Canonical JSON (sorted keys) so equal payloads hash equally whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
