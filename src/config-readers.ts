// The readers of settings from the environment: each takes a name and a default, and adds a
// problem in words to \`problems\` when the value is unusable (config.ts collects them all).
export type Env = Record<string, string | undefined>;

export type Readers = ReturnType<typeof createReaders>;

export function createReaders(env: Env, problems: string[]) {
  const str = (name: string): string | null => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? null : v.trim();
  };
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = str(name);
    if (raw === null) return def;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return def;
    }
    return Number(raw);
  };
  const num = (name: string, def: number, minExclusive: number, max: number): number => {
    const raw = str(name);
    if (raw === null) return def;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= minExclusive || n > max) {
      problems.push(`${name} must be a number above ${minExclusive} and at most ${max} (got "${raw}")`);
      return def;
    }
    return n;
  };
  const bool = (name: string): boolean => {
    const raw = str(name);
    if (raw === null) return false;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return false;
  };
  const url = (name: string, def: string | null): string | null => {
    const raw = str(name) ?? def;
    if (raw === null) return null;
    try {
      const u = new URL(raw);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      return raw.replace(/\/+$/, '');
    } catch {
      problems.push(`${name} must be an http(s) URL (got "${raw}")`);
      return def;
    }
  };

  return { str, int, num, bool, url };
}
