import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { AppProcess } from './support/app-process';
import { bearerFor } from './support/auth';
import { buildOnce } from './support/build';
import { alertRules, asSentByGrafana, dashboardPanels } from './support/dashboard';
import { eventually } from './support/eventually';
import { httpRequest } from './support/http';
import { PrometheusServer } from './support/prometheus-server';
import { describeWithBinary } from './support/system-binary';
import { createTestDatabase } from './support/test-app';

const ROOT = join(__dirname, '..');
const PROMETHEUS_DIR = join(ROOT, 'docker/prometheus');
const promtool = (...args: string[]): Promise<{ stdout: string; stderr: string }> =>
  promisify(execFile)('promtool', args, { cwd: PROMETHEUS_DIR, timeout: 60_000 });

interface RulesTestFile {
  tests: {
    name: string;
    input_series: { series: string }[];
    alert_rule_test: { alertname: string; exp_alerts?: unknown[] }[];
  }[];
}

describeWithBinary('prometheus', 'prometheus')('Prometheus configuration and alert rules', () => {
  it('passes `promtool check config` (with the rule files it loads) and `promtool check rules`', async () => {
    const config = await promtool('check', 'config', 'prometheus.yml');
    expect(config.stdout).toMatch(/SUCCESS: prometheus.yml is valid/);
    const rules = await promtool('check', 'rules', 'alerts.yml');
    expect(rules.stdout).toMatch(new RegExp(`SUCCESS: ${alertRules().length} rules found`));
  });

  it('fires every alert on a synthetic series, and not on another one (`promtool test rules`)', async () => {
    const { stdout } = await promtool('test', 'rules', 'alerts.test.yml');
    expect(stdout).toMatch(/SUCCESS/);
    const file = parse(
      readFileSync(join(PROMETHEUS_DIR, 'alerts.test.yml'), 'utf8'),
    ) as RulesTestFile;
    for (const { alert } of alertRules()) {
      const tests = file.tests.filter((t) => t.alert_rule_test.some((a) => a.alertname === alert));
      const checks = tests.flatMap((t) => t.alert_rule_test.filter((a) => a.alertname === alert));
      const fired = checks.reduce((n, c) => n + (c.exp_alerts?.length ?? 0), 0);
      // Fired by some series, and there are more series (or moments) where it must not fire.
      const quiet =
        checks.some((c) => (c.exp_alerts ?? []).length === 0) ||
        tests.some((t) => t.input_series.length > fired);
      expect({ alert, fires: fired > 0, quiet }).toEqual({ alert, fires: true, quiet: true });
    }
  });
});

describeWithBinary('prometheus', 'prometheus')('Prometheus scraping a running instance', () => {
  let prometheus: PrometheusServer;
  let app: AppProcess;
  let url: string;
  let auth: Record<string, string>;
  /** What beforeAll started, stopped in reverse order, however far it got. */
  const stops: (() => Promise<unknown>)[] = [];

  /** Sends a little of every kind of traffic: lists, cancels, 404s, 401s. */
  const traffic = async (): Promise<void> => {
    for (let i = 0; i < 5; i++) {
      await httpRequest(`${url}/v1/store/orders`, { headers: auth });
      await httpRequest(`${url}/v1/store/orders/999999`, { method: 'DELETE', headers: auth });
      await httpRequest(`${url}/v1/store/orders`);
      await httpRequest(`${url}/no/such/path`);
    }
  };
  const total = async (): Promise<number> => {
    const answer = await prometheus.query('sum(http_requests_total)');
    const sample = answer.data?.result[0] as { value: [number, string] } | undefined;
    return Number(sample?.value[1] ?? 0);
  };

  beforeAll(async () => {
    await buildOnce();
    const databaseUrl = await createTestDatabase();
    auth = await bearerFor(databaseUrl);
    let metricsUrl: string | undefined;
    ({ app, url, metricsUrl } = await AppProcess.start(['node', 'dist/main.js'], {
      DATABASE_URL: databaseUrl,
      METRICS_PORT: '0',
      // Its `listening on` and `metrics on port` lines tell the ports it picked.
      LOG_LEVEL: 'info',
    }));
    stops.push(() => app.stop());

    // The stack's configuration, its targets replaced by this instance, scraped every second.
    const config = parse(readFileSync(join(PROMETHEUS_DIR, 'prometheus.yml'), 'utf8')) as {
      global: Record<string, string>;
      rule_files: string[];
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    config.global = { ...config.global, scrape_interval: '1s', evaluation_interval: '1s' };
    config.rule_files = config.rule_files.map((f) => join(PROMETHEUS_DIR, f));
    config.scrape_configs[0].static_configs = [
      { targets: [new URL(metricsUrl ?? 'http://metrics-port-unknown').host] },
    ];
    prometheus = await PrometheusServer.start(config);
    stops.push(() => prometheus.stop());

    // Two scrapes with traffic between them: rates need two samples of each series.
    await traffic();
    const first = await eventually(total, (n) => n >= 20, 20_000);
    await traffic();
    await eventually(total, (n) => n >= first + 20, 20_000);
  }, 240_000);

  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  it('scrapes the instance', async () => {
    const up = await prometheus.query('up{job="store-orders"}');
    expect(up.data?.result).toEqual([
      expect.objectContaining({ value: [expect.any(Number), '1'] }),
    ]);
  });

  it('evaluates every dashboard panel without error; request rate and latency have data', async () => {
    const panels = dashboardPanels();
    expect(panels.length).toBeGreaterThanOrEqual(8);
    for (const panel of panels) {
      for (const { expr } of panel.targets) {
        const answer = await prometheus.queryRange(asSentByGrafana(expr, '10s'), 60, 1);
        expect({ panel: panel.title, expr, status: answer.status, error: answer.error }).toEqual({
          panel: panel.title,
          expr,
          status: 'success',
          error: undefined,
        });
        if (/request rate|latency/i.test(panel.title)) {
          const hasData = (answer.data?.result.length ?? 0) > 0;
          expect({ panel: panel.title, expr, hasData }).toEqual({
            panel: panel.title,
            expr,
            hasData: true,
          });
        }
      }
    }
    const titles = panels.map((p) => p.title.toLowerCase()).join(' | ');
    for (const subject of [
      'request rate',
      'latency',
      '429',
      'bans',
      'pool',
      'event loop',
      'redis',
    ]) {
      expect(titles).toContain(subject);
    }
  });

  it('evaluates every alert rule without error, and loads them all healthy', async () => {
    for (const rule of alertRules()) {
      const answer = await prometheus.query(rule.expr);
      expect({ alert: rule.alert, status: answer.status, error: answer.error }).toEqual({
        alert: rule.alert,
        status: 'success',
        error: undefined,
      });
    }
    // The rule manager's own evaluations (every second here): none in error.
    const rules = await eventually(
      () =>
        prometheus.get<{
          data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] };
        }>('/api/v1/rules'),
      (r) => r.data.groups.flatMap((g) => g.rules).every((rule) => rule.health !== 'unknown'),
      20_000,
    );
    const loaded = rules.data.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => r.name).sort()).toEqual(
      alertRules()
        .map((r) => r.alert)
        .sort(),
    );
    for (const rule of loaded) {
      expect({ rule: rule.name, health: rule.health, error: rule.lastError ?? '' }).toEqual({
        rule: rule.name,
        health: 'ok',
        error: '',
      });
    }
  });

  it('reads the instance as ready (app_ready 1)', async () => {
    const ready = await prometheus.query('app_ready');
    expect(ready.data?.result).toEqual([
      expect.objectContaining({ value: [expect.any(Number), '1'] }),
    ]);
  });
});
