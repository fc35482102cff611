// Opt-out keywords: an inbound text that is one of them, as a whole, puts its sender on the
// account's suppression list (decision 0014).

/** The list an account uses until its customer sets its own. */
export const DEFAULT_OPT_OUT_KEYWORDS = ['STOP', 'UNSUBSCRIBE', 'STOPP', 'ARRET', 'BAJA'] as const;
export const MAX_OPT_OUT_KEYWORDS = 50;
export const MAX_KEYWORD_LENGTH = 50;

/** How keywords and texts are compared: surrounding whitespace trimmed, case ignored. */
export const foldKeyword = (text: string): string => text.trim().toLocaleUpperCase('en-US');

/** The keyword `text` is, whole (never a keyword inside longer text), or null. */
export function matchOptOutKeyword(text: string | null, keywords: readonly string[]): string | null {
  if (text === null) return null;
  const folded = foldKeyword(text);
  if (folded === '') return null;
  return keywords.find((k) => foldKeyword(k) === folded) ?? null;
}
