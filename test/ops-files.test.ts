// The dashboard and the alert rules in ops/: well-formed, and every metric they use is one the
// service exposes at /metrics. When promtool is installed (Debian: apt-get install prometheus),
// it checks the rules and parses every dashboard query as PromQL.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, eventually, type Service, startService } from './support/harness.js';
import { exposedNames, metricNamesIn } from './support/prometheus-text.js';

const DASHBOARD = 'ops/grafana/chatgate-dashboard.json';
const ALERTS = 'ops/prometheus/alerts.yml';
const ALERT_TESTS = 'ops/prometheus/alerts.test.yml';
/** Series Prometheus itself writes for every target (not exposed by the service). */
const PROMETHEUS_OWN = /^(absent\()?up\{/;

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

const TOKEN = 'ops-files-metrics-token-0123';

describe('ops/ dashboard and alert rules', () => {
  let svc: Service;
  let names: Set<string>;

  beforeAll(async () => {
    // The dashboard and the alert rules use the per-account and per-endpoint series, which only a
    // scrape with METRICS_TOKEN gets (docs/operations.md, "Metrics").
    svc = await startService({ role: 'api', env: { METRICS_TOKEN: TOKEN } });
    names = exposedNames(
      await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text(),
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
    const exprs = [...dashboardExprs, ...ruleExprs(fs.readFileSync(ALERTS, 'utf8'))].filter(
      (e) => !PROMETHEUS_OWN.test(e),
    );
    expect(ruleExprs(fs.readFileSync(ALERTS, 'utf8'))).toHaveLength(14);
    for (const expr of exprs) {
      const used = metricNamesIn(expr);
      expect(used.length, expr).toBeGreaterThan(0);
      for (const name of used) expect(names.has(name), `${name} in ${expr}`).toBe(true);
    }
  });

  it('alerts when the service is down or not scraped, and names the account and customer of an account in ERROR', async () => {
    const rules = fs.readFileSync(ALERTS, 'utf8');
    expect(rules).toContain('expr: up{job="chatgate"} == 0');
    expect(rules).toContain('expr: absent(up{job="chatgate"})');
    expect(rules).toContain('max by (account_id, customer_id, code) (chatgate_chat_account_in_error)');
    const customer = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Ops', plan: 'pro' },
    });
    const account = await call(svc.url, 'POST', `/admin/customers/${customer.body.id}/chat-accounts`, {
      admin: true,
      body: { type: 'DIRECT', phoneNumber: '+15550001111', displayName: 'Ops', status: 'ERROR' },
    });
    expect(account.status).toBe(201);
    // As the dispatcher marks an account after a provider error (dispatch/outcomes.ts).
    await svc.db.query("UPDATE chat_accounts SET last_error_code = 'AUTH_REJECTED' WHERE id = $1", [account.body.id]);
    const series = `chatgate_chat_account_in_error{account_id="${account.body.id}",customer_id="${customer.body.id}",code="AUTH_REJECTED"} 1`;
    await eventually(async () =>
      (await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text()).includes(
        series,
      ),
    );
  });

  it('has a promtool unit test for every alert rule (ops/prometheus/alerts.test.yml)', () => {
    const alerts = [...fs.readFileSync(ALERTS, 'utf8').matchAll(/^\s+- alert: (\S+)$/gm)].map((m) => m[1]!);
    const tested = new Set([...fs.readFileSync(ALERT_TESTS, 'utf8').matchAll(/alertname: (\S+)$/gm)].map((m) => m[1]!));
    expect(alerts).toHaveLength(14);
    expect(alerts.filter((a) => !tested.has(a))).toEqual([]);
  });

  it.skipIf(!promtool)("promtool runs the alert rules' unit tests", () => {
    execFileSync('promtool', ['test', 'rules', ALERT_TESTS], { stdio: 'pipe' });
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
