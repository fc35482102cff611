// Hashing, secrets at rest (AES-256-GCM, key ids, bound to their row) and constant-time comparison.
import crypto from 'node:crypto';

export function sha256Hex(value: string | Buffer): string {
  return crypto.hash('sha256', value, 'hex'); // one-shot: no Hash object per call
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

/**
 * Where a sealed value lives: its table, column and row id, bound to it as AES-GCM associated
 * data, so a sealed value copied to another row or column does not open. (A column that holds an
 * earlier value of another, like a webhook endpoint's previous secret, names that column.)
 */
export type SealedAt = { table: string; column: string; id: string };

export type Sealer = {
  /** The id of the key new values are sealed with (ENCRYPTION_KEY). */
  readonly keyId: string;
  /** The id of the key still accepted for opening during a rotation (ENCRYPTION_KEY_PREVIOUS), if any. */
  readonly previousKeyId: string | null;
  seal(plain: string, at: SealedAt): string;
  open(sealed: string, at: SealedAt): string;
  /** Whether a sealed value is in the current format under the current key (rekey leaves it alone). */
  isCurrent(sealed: string): boolean;
};

/** A key's id: public, derived from the key (HMAC), so every process computes the same one. */
export function keyIdOf(key: Buffer): string {
  return crypto.createHmac('sha256', key).update('chatgate encryption key id').digest('hex').slice(0, 16);
}

const aad = (at: SealedAt) => Buffer.from(`chatgate:${at.table}.${at.column}:${at.id}`, 'utf8');

/**
 * Encrypts secrets at rest with AES-256-GCM: "v2.<key id>.<iv>.<tag>.<ciphertext>" (base64url),
 * with the value's table, column and row id as associated data. Values of the first format,
 * "v1.<iv>.<tag>.<ciphertext>" (no key id, no associated data), still open (with either key),
 * until `chatgate admin rekey` re-seals them.
 *
 * Workers open the same few sealed values (account tokens, endpoint secrets) on every batch, so
 * `open` keeps the last `cacheSize` results, keyed by the place and the sealed text: sealing draws
 * a fresh IV, so a changed secret is a new key and the old entry is simply never hit again (and
 * ages out). Plaintexts stay in this process's memory only, as they do while in use; nothing
 * logs them.
 */
export function createSealer(keys: Buffer | { current: Buffer; previous?: Buffer | null }, cacheSize = 10_000): Sealer {
  const { current, previous } = Buffer.isBuffer(keys) ? { current: keys, previous: null } : keys;
  for (const k of [current, previous]) if (k && k.length !== 32) throw new Error('encryption key must be 32 bytes');
  const keyId = keyIdOf(current);
  const byId = new Map<string, crypto.KeyObject>([[keyId, crypto.createSecretKey(current)]]);
  const previousKeyId = previous ? keyIdOf(previous) : null;
  if (previous && previousKeyId !== keyId) byId.set(previousKeyId!, crypto.createSecretKey(previous));
  const decrypt = (key: crypto.KeyObject, iv: string, tag: string, ct: string, data: Buffer | null) => {
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    if (data) decipher.setAAD(data);
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  };
  function open(sealed: string, at: SealedAt): string {
    const parts = sealed.split('.');
    if (parts[0] === 'v2' && parts.length === 5) {
      const [, id, iv, tag, ct] = parts as [string, string, string, string, string];
      const key = byId.get(id);
      if (!key)
        throw new Error(
          `sealed with key ${id}, which this process does not have (ENCRYPTION_KEY ${keyId}` +
            `${previousKeyId ? `, ENCRYPTION_KEY_PREVIOUS ${previousKeyId}` : ''})`,
        );
      return decrypt(key, iv, tag, ct, aad(at));
    }
    if (parts[0] === 'v1' && parts.length === 4) {
      const [, iv, tag, ct] = parts as [string, string, string, string];
      let failure: unknown;
      for (const key of byId.values()) {
        try {
          return decrypt(key, iv, tag, ct, null);
        } catch (err) {
          failure = err;
        }
      }
      throw failure;
    }
    throw new Error('unknown sealed format');
  }
  const opened = new Map<string, string>();
  return {
    keyId,
    previousKeyId,
    seal(plain, at) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', byId.get(keyId)!, iv);
      cipher.setAAD(aad(at));
      const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v2', keyId, ...[iv, cipher.getAuthTag(), ct].map((b) => b.toString('base64url'))].join('.');
    },
    open(sealed, at) {
      const cacheKey = `${at.table}.${at.column}:${at.id}\n${sealed}`;
      const hit = opened.get(cacheKey);
      if (hit !== undefined) {
        // Least recently used first: a hit moves to the end.
        opened.delete(cacheKey);
        opened.set(cacheKey, hit);
        return hit;
      }
      const plain = open(sealed, at);
      if (cacheSize > 0) {
        opened.set(cacheKey, plain);
        if (opened.size > cacheSize) opened.delete(opened.keys().next().value!);
      }
      return plain;
    },
    isCurrent: (sealed) => sealed.startsWith(`v2.${keyId}.`),
  };
}

/**
 * Canonical JSON (sorted keys, undefined members left out) so equal payloads hash equally whatever
 * the key order. Its output is what stored payload hashes were computed from: it must not change.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  let out = '';
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member !== undefined) out += `,${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `{${out.slice(1)}}`;
}
