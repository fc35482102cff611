// The dashboard and the alert rules in ops/: well-formed, and every metric they use is one the
// service exposes at /metrics. When promtool is installed (Debian: apt-get install prometheus),
// it checks the rules and parses every dashboard query as PromQL.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Service, startService } from './support/harness.js';
import { exposedNames, metricNamesIn } from './support/prometheus-text.js';

const DASHBOARD = 'ops/grafana/chatgate-dashboard.json';
const ALERTS = 'ops/prometheus/alerts.yml';

const promtool = (() => {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

type Panel = {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: { refId: string; expr: string; datasource?: { uid: string } }[];
};

const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: { name: string; type: string }[] };
};
const queryPanels = dashboard.panels.filter((p) => p.type !== 'row');
const dashboardExprs = queryPanels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));

/** The `expr:` values of a rules file (plain or `|` block scalars), without a YAML library. */
function ruleExprs(yaml: string): string[] {
  const lines = yaml.split('\n');
  const out: string[] = [];
  lines.forEach((line, i) => {
    const m = /^(\s*)expr:\s*(.*)$/.exec(line);
    if (!m) return;
    if (m[2] !== '|') return void out.push(m[2]!);
    const block: string[] = [];
    for (
      let j = i + 1;
      j < lines.length && (lines[j]!.trim() === '' || /^\s+/.exec(lines[j]!)![0].length > m[1]!.length);
      j++
    )
      block.push(lines[j]!.trim());
    out.push(block.join(' '));
  });
  return out;
}

describe('ops/ dashboard and alert rules', () => {
  let svc: Service;
  let names: Set<string>;

  beforeAll(async () => {
    // The dashboard and the alert rules use the per-account and per-endpoint series, which only a
    // scrape with METRICS_TOKEN gets (README, "Metrics").
    const token = 'ops-files-metrics-token-0123';
    svc = await startService({ role: 'api', env: { METRICS_TOKEN: token } });
    names = exposedNames(
      await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text(),
    );
  });
  afterAll(() => svc.stop());

  it('the dashboard has the shape Grafana imports', () => {
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(dashboard.title).toBe('ChatGate');
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource' }),
    );
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) {
      expect(p.gridPos.w).toBeGreaterThan(0);
      expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
    }
    expect(queryPanels.length).toBeGreaterThanOrEqual(10);
    for (const p of queryPanels) {
      expect(p.type, p.title).toBe('timeseries');
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) expect(t.refId).toMatch(/^[A-Z]$/);
    }
  });

  it('every metric the dashboard and the alert rules use is exposed by the service', () => {
    const exprs = [...dashboardExprs, ...ruleExprs(fs.readFileSync(ALERTS, 'utf8'))];
    expect(ruleExprs(fs.readFileSync(ALERTS, 'utf8'))).toHaveLength(5);
    for (const expr of exprs) {
      const used = metricNamesIn(expr);
      expect(used.length, expr).toBeGreaterThan(0);
      for (const name of used) expect(names.has(name), `${name} in ${expr}`).toBe(true);
    }
  });

  it.skipIf(!promtool)('promtool accepts the alert rules and parses every dashboard query', () => {
    execFileSync('promtool', ['check', 'rules', ALERTS], { stdio: 'pipe' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-ops-'));
    const file = path.join(dir, 'dashboard-queries.yml');
    const rules = dashboardExprs.map(
      (expr, i) =>
        `      - record: chatgate:dashboard_query_${i}\n        expr: ${JSON.stringify(expr.replaceAll('$__rate_interval', '5m'))}`,
    );
    fs.writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`);
    try {
      execFileSync('promtool', ['check', 'rules', file], { stdio: 'pipe' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
