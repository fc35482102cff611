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

/** The first problem in a parsed value, or null. Iterative: depth cannot overflow the stack. */
export function findInputProblem(value: unknown, root: string): Problem | null {
  const stack: { v: unknown; path: string[]; depth: number }[] = [{ v: value, path: root ? [root] : [], depth: 0 }];
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      if (badString(v))
        return { path: path.join('.'), message: 'must not contain NUL characters or unpaired surrogates' };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH)
      return { path: path.join('.'), message: `is nested more than ${MAX_JSON_DEPTH} levels deep` };
    const entries = Array.isArray(v)
      ? v.map((x, i) => [String(i), x] as const)
      : Object.entries(v as Record<string, unknown>);
    for (const [k, x] of entries) {
      if (badString(k))
        return { path: path.join('.'), message: 'has a key with NUL characters or unpaired surrogates' };
      stack.push({ v: x, path: [...path, k], depth: depth + 1 });
    }
  }
  return null;
}
