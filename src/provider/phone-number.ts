// What a phone-number read (GET /{phone-number-id}) tells of the number: its throughput level,
// `throughput.level` STANDARD (80 mps) or HIGH (1,000 mps) (docs/provider-protocol-2026.md,
// "Throughput level and maintenance mode"; decision 0042).
export type ThroughputLevel = 'STANDARD' | 'HIGH';

/** The number's throughput level from a phone-number read's answer (absent or unknown: null). */
export function throughputLevelOf(body: unknown): ThroughputLevel | null {
  const level = (body as { throughput?: { level?: unknown } } | null)?.throughput?.level;
  return level === 'STANDARD' || level === 'HIGH' ? level : null;
}
