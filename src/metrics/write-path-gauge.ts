// The write path's stall, read when Prometheus scrapes: how long each part this process runs has
// been stuck (a batch of accepted sends in flight, a dispatcher wanting a pass that does not
// complete, an outcome batch being written), 0 while it moves or is idle. /readyz turns 503 past
// its bound (health/readiness.ts); ChatGateWritePathStuck alerts on it (ops/prometheus/alerts.yml).
import { type Metrics, scrapedGauge } from './metrics.js';

export function registerWritePathGauge(
  metrics: Pick<Metrics, 'registry'>,
  stalls: () => { part: string; stalledMs: number }[],
): void {
  scrapedGauge(
    metrics,
    {
      name: 'chatgate_write_path_stalled_seconds',
      help: 'How long a part of the write path this process runs has been stuck, by part (accept: a batch of accepted sends in flight; dispatcher: a pass wanted and not completed, or an outcome batch in flight); 0 while it moves or is idle',
      labelNames: ['part'] as const,
    },
    (gauge) => {
      gauge.reset();
      for (const s of stalls()) gauge.set({ part: s.part }, s.stalledMs / 1000);
    },
  );
}
