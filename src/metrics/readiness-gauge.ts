// Readiness as a series, read when Prometheus scrapes: the same check /readyz answers (the database
// answers, migrations applied, no recent database fault, the write path moving), so an alert can
// page when a process stays unready (ChatGateNotReady, ops/prometheus/alerts.yml). Prometheus does
// not probe /readyz itself; a load balancer that does only takes the process out of rotation.
import { type Metrics, scrapedGauge } from './metrics.js';

export function registerReadinessGauge(metrics: Pick<Metrics, 'registry'>, ready: () => Promise<boolean>): void {
  scrapedGauge(
    metrics,
    {
      name: 'chatgate_ready',
      help: 'Whether this process is ready (1) or not (0), by the check /readyz answers with; the reasons are in /readyz and the log',
      labelNames: [],
    },
    async (gauge) => {
      gauge.set((await ready()) ? 1 : 0);
    },
  );
}
