// Forwarding rule conditions: contains, starts with, or a regular expression run by re2js, a
// linear-time engine (no backtracking). Linear is not cheap enough on its own: a 76-character
// pattern of three 1,000-fold repetitions held the event loop for seconds (issue 21). So the work
// is bounded three ways (decision 0022-regex-work-bounds):
// - a pattern is refused when re2js compiles it to more than MAX_PROGRAM_SIZE instructions, or when
//   a counted repetition asks for more than MAX_REPEAT copies (nested counts multiply);
// - only the first MAX_MATCH_TEXT characters of a text are matched;
// - regular expressions run in a worker thread with a time budget per message (rule-matcher.ts),
//   never on the event loop.
export const MAX_PATTERN_LENGTH = 500;
/** Instructions of the compiled program (re2js programSize()): typical keyword lists use 10–150. */
export const MAX_PROGRAM_SIZE = 500;
/** Copies a counted repetition `{n,m}` may ask for; repetitions inside repetitions multiply. */
export const MAX_REPEAT = 100;
/** Text beyond this many characters (UTF-16 code units) is not matched: the provider's text limit. */
export const MAX_MATCH_TEXT = 4096;

export type Condition = { type: 'contains' | 'starts_with' | 'regex'; pattern: string; caseSensitive: boolean };

/**
 * Where the escape starting at `i` ends, and how many literal characters it stands for beyond its
 * one atom (the text of a `\Q…\E` quote; `\p{…}`, `\x{…}` and the rest are one atom).
 */
function skipEscape(pattern: string, i: number): { end: number; literal: number } {
  if (pattern[i + 1] === 'Q') {
    const end = pattern.indexOf('\\E', i + 2);
    const stop = end < 0 ? pattern.length : end;
    return { end: end < 0 ? pattern.length : end + 2, literal: stop - (i + 2) };
  }
  if (/[pPx]/.test(pattern[i + 1] ?? '') && pattern[i + 2] === '{') {
    const end = pattern.indexOf('}', i + 3);
    return { end: end < 0 ? pattern.length : end + 1, literal: 0 };
  }
  return { end: i + 2, literal: 0 };
}

/** Where the character class starting at `i` ends (just after its `]`), skipped whole. */
function skipClass(pattern: string, i: number): number {
  let j = i + 1;
  if (pattern[j] === '^') j++;
  if (pattern[j] === ']') j++;
  while (j < pattern.length && pattern[j] !== ']') {
    if (pattern[j] === '\\') j += 2;
    else if (pattern[j] === '[' && pattern[j + 1] === ':') {
      const end = pattern.indexOf(':]', j + 2);
      j = end < 0 ? j + 1 : end + 2;
    } else j++;
  }
  return j + 1;
}

/**
 * What compiling a pattern would expand, read before compiling so that a pattern asking for a huge
 * expansion costs nothing to refuse (compiling a 500-character pattern of 100 × 160 classes takes
 * re2js 100–400 ms). `repeat`: the largest product of counted repetitions along one nesting path
 * (`(?:a{10}){20}` is 200); `size`: about one instruction per atom, operator and copy. re2js keeps
 * its parse tree to itself, so this reads only atoms, groups and counts: escapes, `\Q…\E` and
 * character classes are skipped whole. Whatever it misreads is still bounded by the check on
 * re2js's own compiled program that follows.
 */
export function expansionOf(pattern: string): { repeat: number; size: number } {
  // per open group: the largest product seen inside it, and its size so far
  const stack: { repeat: number; size: number }[] = [{ repeat: 1, size: 0 }];
  let lastAtomEnd = -1; // where the atom a `{n,m}` would repeat ends
  let last = { repeat: 1, size: 1 }; // that atom: a group's product and size, or a single atom
  const top = () => stack[stack.length - 1]!;
  const atom = (end: number) => {
    top().size += 1;
    lastAtomEnd = end;
    last = { repeat: 1, size: 1 };
  };
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (ch === '\\') {
      const escape = skipEscape(pattern, i);
      top().size += escape.literal;
      i = escape.end;
      atom(i);
      continue;
    }
    if (ch === '[') {
      i = skipClass(pattern, i);
      atom(i);
      continue;
    }
    if (ch === '(') {
      stack.push({ repeat: 1, size: 0 });
      i++;
      lastAtomEnd = -1;
      continue;
    }
    if (ch === ')') {
      last = stack.length > 1 ? stack.pop()! : { repeat: 1, size: 1 };
      top().repeat = Math.max(top().repeat, last.repeat);
      top().size += last.size;
      i++;
      lastAtomEnd = i;
      continue;
    }
    if (ch === '{' && lastAtomEnd === i) {
      const m = /^\{(\d+)(?:(,)(\d*))?\}/.exec(pattern.slice(i, i + 24));
      if (m) {
        const min = Number(m[1]);
        const max = m[3] ? Number(m[3]) : m[2] ? min + 1 : min;
        const n = Math.max(min, max, 1);
        top().repeat = Math.max(top().repeat, last.repeat * n);
        top().size += last.size * (n - 1) + (max - min);
        i += m[0].length;
        lastAtomEnd = i;
        last = { repeat: last.repeat * n, size: last.size * n };
        continue;
      }
    }
    if (ch === '*' || ch === '+' || ch === '?' || ch === '|') {
      top().size += 1;
      i++;
      lastAtomEnd = ch === '|' ? -1 : i;
      continue;
    }
    atom(i + 1);
    i++;
  }
  return {
    repeat: Math.max(...stack.map((f) => f.repeat)),
    size: stack.reduce((sum, f) => sum + f.size, 0),
  };
}

const tooLarge = (size: string) =>
  `is too large: it compiles to ${size} instructions, at most ${MAX_PROGRAM_SIZE} are allowed`;

/**
 * The reason a pattern is refused before compiling it, or null: its length, its repetition counts,
 * and an expansion far beyond the program size limit (the estimate over-counts alternations of
 * classes, which re2js merges, so only ten times the limit is refused here). The compiled program
 * size is checked by compileCheck in the matcher's worker (rule-matcher.ts).
 */
export function checkPattern(c: Condition): string | null {
  if (c.pattern.length === 0 || c.pattern.length > MAX_PATTERN_LENGTH)
    return `must be 1 to ${MAX_PATTERN_LENGTH} characters`;
  if (c.type !== 'regex') return null;
  const expansion = expansionOf(c.pattern);
  if (expansion.repeat > MAX_REPEAT)
    return `repeats too much: a counted repetition {n,m} may ask for at most ${MAX_REPEAT} copies, nested ones multiplied`;
  if (expansion.size > 10 * MAX_PROGRAM_SIZE) return tooLarge(`about ${expansion.size}`);
  return null;
}

/** The reason a compiled program is refused, or null (run where the pattern was compiled). */
export function checkProgramSize(size: number): string | null {
  return size > MAX_PROGRAM_SIZE ? tooLarge(String(size)) : null;
}

/** The text a condition is matched against: its first MAX_MATCH_TEXT characters. */
export const matchedText = (text: string) => text.slice(0, MAX_MATCH_TEXT);

/** contains / starts_with (cheap: run inline); regular expressions go through rule-matcher.ts. */
export function matchesPlain(c: Condition, text: string): boolean {
  const t = matchedText(text);
  const [hay, needle] = c.caseSensitive ? [t, c.pattern] : [t.toLowerCase(), c.pattern.toLowerCase()];
  return c.type === 'contains' ? hay.includes(needle) : hay.startsWith(needle);
}
