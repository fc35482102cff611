// Checks every string of a request (path, query, JSON or form body) for what PostgreSQL cannot
// store or what could hurt the service: NUL characters (22021 character_not_in_repertoire as text,
// 22P05 untranslatable_character as jsonb), unpaired UTF-16 surrogates (JSON's "\ud800": invalid
// UTF-8, refused as jsonb), and nesting so deep that recursive code would overflow. The one place
// such text is stopped (decision 0062): a hook before validation answers validation_error naming
// the path; the provider webhook, which must answer 200 to what it can never store, drops the items
// that hold it (dropUnstorableItems).
import type { FastifyReply, FastifyRequest } from 'fastify';

import { errors, type Problem } from '../shared/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route reads query parameters its schema does not declare (the portal's pages read theirs
     * with pageQuery): the guard checks every parameter, not only the declared ones.
     */
    readsAnyQuery?: boolean;
  }
}

export const MAX_JSON_DEPTH = 32;

// A lone high surrogate (not followed by a low one) or a lone low one (not preceded by a high one).
const BAD_CHARS = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function badString(s: string): boolean {
  return BAD_CHARS.test(s);
}

/** How a value was reached (the path is joined only for a problem). */
type PathNode = { key: string | null; parent: PathNode | null };
/** A value to look at. */
type Node = PathNode & { v: unknown; parent: Node | null; depth: number };

function pathOf(node: PathNode): string {
  const keys: string[] = [];
  for (let n: PathNode | null = node; n !== null; n = n.parent) if (n.key !== null) keys.push(n.key);
  return keys.reverse().join('.');
}

/**
 * The first problem in a parsed value, or null. Iterative: depth cannot overflow the stack. Runs
 * on every request body: a node keeps its parent, not a copy of its path (no array per value).
 */
export function findInputProblem(value: unknown, root: string): Problem | null {
  const stack: Node[] = [{ v: value, key: root ? root : null, parent: null, depth: 0 }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.v;
    if (typeof v === 'string') {
      if (badString(v))
        return { path: pathOf(node), message: 'must not contain NUL characters or unpaired surrogates' };
      continue;
    }
    // A file's bytes (a multipart body's Buffer) are not text.
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) continue;
    if (node.depth >= MAX_JSON_DEPTH)
      return { path: pathOf(node), message: `is nested more than ${MAX_JSON_DEPTH} levels deep` };
    const depth = node.depth + 1;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ v: v[i], key: String(i), parent: node, depth });
      continue;
    }
    for (const k in v as Record<string, unknown>) {
      if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
      if (badString(k)) return { path: pathOf(node), message: 'has a key with NUL characters or unpaired surrogates' };
      stack.push({ v: (v as Record<string, unknown>)[k], key: k, parent: node, depth });
    }
  }
  return null;
}

/**
 * The input guard as a hook (preValidation): what the route reads, its path parameters, the query
 * it declares (every parameter when it reads any, `readsAnyQuery`; a cursor is checked by its own
 * decoder: invalid_cursor), and a parsed body (JSON, a form; a raw Buffer is the route's to read).
 * Also registered after a plugin that parses a body in a hook of its own (multipart, upload.ts).
 */
export function checkRequestInput(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  if (request.is404) return done();
  const readsQuery = request.routeOptions.config?.readsAnyQuery === true;
  const declaresQuery = readsQuery || request.routeOptions.schema?.querystring !== undefined;
  const query = declaresQuery
    ? Object.fromEntries(Object.entries(request.query as Record<string, unknown>).filter(([k]) => k !== 'cursor'))
    : null;
  const problem =
    findInputProblem(request.params, '') ??
    findInputProblem(query, '') ??
    (Buffer.isBuffer(request.body) ? null : findInputProblem(request.body, ''));
  done(problem ? errors.validation([problem]) : undefined);
}

/** A node of dropUnstorableItems' walk: `item` is the nearest array element holding it (itself included). */
type ItemNode = PathNode & { v: unknown; parent: ItemNode | null; item: ItemNode | null };

/**
 * A parsed payload without the array elements (entries, changes, statuses, messages…) that hold
 * text PostgreSQL cannot store, anywhere in them, as a value or a key: the rest of the payload is
 * kept. `kept` is null when such text sits outside every array (nothing of the payload can be
 * used); `dropped` names each element taken out (`entry.0.changes.1`). The payload is changed in
 * place. Iterative: a deep payload cannot overflow the stack. For the provider webhook: a signed
 * payload we can never store is answered 200 (the provider retries anything else for days).
 */
export function dropUnstorableItems(payload: unknown): { kept: unknown; dropped: string[] } {
  const drop = new Map<unknown[], Set<number>>();
  const dropped: string[] = [];
  const marked = new Set<ItemNode>();
  const stack: ItemNode[] = [{ v: payload, key: null, parent: null, item: null }];
  const mark = (node: ItemNode): boolean => {
    const item = node.item;
    if (item === null) return false;
    if (!marked.has(item)) {
      marked.add(item);
      dropped.push(pathOf(item));
      const list = item.parent!.v as unknown[];
      (drop.get(list) ?? drop.set(list, new Set()).get(list)!).add(Number(item.key));
    }
    return true;
  };
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.item !== null && marked.has(node.item)) continue;
    const v = node.v;
    if (typeof v === 'string') {
      if (badString(v) && !mark(node)) return { kept: null, dropped: [pathOf(node)] };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const child: ItemNode = { v: v[i], key: String(i), parent: node, item: null };
        child.item = child;
        stack.push(child);
      }
      continue;
    }
    for (const k in v as Record<string, unknown>) {
      if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
      if (badString(k)) {
        if (!mark(node)) return { kept: null, dropped: [pathOf(node)] };
        break;
      }
      stack.push({ v: (v as Record<string, unknown>)[k], key: k, parent: node, item: node.item });
    }
  }
  for (const [list, indexes] of drop) {
    let to = 0;
    for (let from = 0; from < list.length; from++) if (!indexes.has(from)) list[to++] = list[from];
    list.length = to;
  }
  return { kept: payload, dropped };
}
