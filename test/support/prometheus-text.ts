// Reading Prometheus' text exposition format in tests: samples with their labels, and the metric
// families the output declares (# TYPE), to check that dashboards and alert rules use real names.
export type Sample = { name: string; labels: Record<string, string>; value: number };

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** Every name a query may use: each declared family, with a histogram's _bucket, _sum and _count. */
export function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(m[1]!);
    if (m[2] === 'histogram' || m[2] === 'summary') for (const s of ['_bucket', '_sum', '_count']) names.add(m[1]! + s);
  }
  return names;
}

/** The value of the one sample matching name and labels (0 when absent). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const s = samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value ?? 0;
}

/** The service's metric names a PromQL expression uses (by their prefixes; label names have none). */
export function metricNamesIn(expr: string, prefixes = ['chatgate_', 'process_', 'nodejs_']): string[] {
  const names = new Set<string>();
  for (const m of expr.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g))
    if (prefixes.some((p) => m[0].startsWith(p))) names.add(m[0]);
  return [...names];
}

/**
 * The sum over the series of one counter on a service's /metrics (those with these labels; open
 * when no METRICS_TOKEN is set): tests wait on it for "everything that could happen has been
 * decided" instead of sleeping.
 */
export async function metricSum(baseUrl: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${baseUrl}/metrics`);
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  return parseSamples(await res.text())
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
