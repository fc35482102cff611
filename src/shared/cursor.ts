// Opaque page cursors: base64url of the last row's sort key (createdAt, id); keyset.ts pages with them.
import { errors } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type Position = { createdAt: Date; id: string };

export function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify([p.createdAt.toISOString(), p.id])).toString('base64url');
}

export function decodeCursor(cursor: string): Position {
  try {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw new Error('charset');
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 2) throw new Error('shape');
    const [at, id] = parsed as unknown[];
    if (typeof at !== 'string' || typeof id !== 'string' || !UUID.test(id)) throw new Error('fields');
    const createdAt = new Date(at);
    if (
      Number.isNaN(createdAt.getTime()) ||
      createdAt.toISOString() !== at ||
      !/^\d{4}-/.test(at) ||
      createdAt.getUTCFullYear() < 1
    )
      throw new Error('date');
    return { createdAt, id };
  } catch {
    throw errors.invalidCursor();
  }
}
