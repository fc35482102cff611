// Checks every string of a request (path, query, JSON body) for what PostgreSQL cannot store or
// what could hurt the service: NUL characters, unpaired UTF-16 surrogates, and nesting so deep
// that recursive code would overflow. Runs before validation; answers validation_error.
import type { Problem } from '../shared/errors.js';

export const MAX_JSON_DEPTH = 32;

// A lone high surrogate (not followed by a low one) or a lone low one (not preceded by a high one).
const BAD_CHARS = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function badString(s: string): boolean {
  return BAD_CHARS.test(s);
}

/** A value to look at, and how it was reached (the path is joined only for a problem). */
type Node = { v: unknown; key: string | null; parent: Node | null; depth: number };

function pathOf(node: Node): string {
  const keys: string[] = [];
  for (let n: Node | null = node; n !== null; n = n.parent) if (n.key !== null) keys.push(n.key);
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
    if (v === null || typeof v !== 'object') continue;
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
