// Id label values (chat accounts, webhook endpoints) grow with the customer base: the first `max`
// distinct ids seen by this process keep their own series, later ones share "other", so one
// process never exports an unbounded number of series.
export const OVERFLOW_LABEL = 'other';

export function cappedLabel(max: number): (id: string) => string {
  const seen = new Set<string>();
  return (id) => {
    if (seen.has(id)) return id;
    if (seen.size >= max) return OVERFLOW_LABEL;
    seen.add(id);
    return id;
  };
}
