// Forwarding rule conditions: contains, starts with, or a regular expression run by re2js, a
// linear-time engine (no backtracking), with a bounded pattern size and text length, so no
// customer's rule can stall ingestion.
import { RE2JS } from 're2js';

export const MAX_PATTERN_LENGTH = 500;
/** Text longer than this is matched on its start only. */
const MAX_MATCH_TEXT = 10_000;

export type Condition = { type: 'contains' | 'starts_with' | 'regex'; pattern: string; caseSensitive: boolean };

/** The reason a pattern is refused, or null. */
export function checkPattern(c: Condition): string | null {
  if (c.pattern.length === 0 || c.pattern.length > MAX_PATTERN_LENGTH)
    return `must be 1 to ${MAX_PATTERN_LENGTH} characters`;
  if (c.type !== 'regex') return null;
  try {
    RE2JS.compile(c.pattern, c.caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE);
    return null;
  } catch (err) {
    return `is not a supported regular expression (RE2 syntax): ${(err as Error).message}`.slice(0, 300);
  }
}

const compiled = new Map<string, RE2JS>();

export function matches(c: Condition, text: string | null): boolean {
  if (text === null) return false;
  const t = text.slice(0, MAX_MATCH_TEXT);
  if (c.type === 'regex') {
    const key = `${c.caseSensitive ? 1 : 0}:${c.pattern}`;
    let re = compiled.get(key);
    if (!re) {
      if (compiled.size > 10_000) compiled.clear();
      re = RE2JS.compile(c.pattern, c.caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE);
      compiled.set(key, re);
    }
    return re.matcher(t).find();
  }
  const [hay, needle] = c.caseSensitive ? [t, c.pattern] : [t.toLowerCase(), c.pattern.toLowerCase()];
  return c.type === 'contains' ? hay.includes(needle) : hay.startsWith(needle);
}
