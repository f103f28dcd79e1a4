/**
 * The dashboard's picture in docs/operating.md (docs/dashboard.png), from real data: the built service
 * (two instances, as in the compose stack) on an embedded PostgreSQL and a real Redis, scraped by
 * a real Prometheus (Debian's package) with the stack's configuration and rules, under about 90 s
 * of mixed traffic (lists, cancels, 404s, a free-plan client running into 429s and a ban). Then
 * every panel of docker/grafana/dashboards/store-orders.json is queried from Prometheus' HTTP API
 * exactly as Grafana would, drawn with uPlot on a static page laid out like the dashboard, and
 * screenshotted in Debian's chromium. Grafana itself is not in Debian, hence this page.
 *
 * Run with `npm run dashboard:screenshot` (builds first; needs prometheus, redis-server, chromium).
 */
import autocannon from 'autocannon';
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { parse } from 'yaml';
import {
  Cluster,
  freePort,
  makeRootDir,
  pgCtl,
  removeRootDir,
  startCluster,
  withClient,
} from '../test/setup/clusters';
import { createMigratedDatabase } from '../test/support/migrated-database';
import { AppProcess } from '../test/support/app-process';
import { bearerFromKeysTool } from '../test/support/auth';
import { runBounded } from '../test/support/bounded-run';
import { asSentByGrafana, dashboardPanels } from '../test/support/dashboard';
import { PrometheusServer } from '../test/support/prometheus-server';
import { RedisServer } from '../test/support/redis-server';

const ROOT = join(__dirname, '..');
const OUTPUT = join(ROOT, 'docs/dashboard.png');
const SCRAPE_SECONDS = 2;
/** Grafana's $__rate_interval for that scrape interval and a 2 s step: max(4 × scrape, step + scrape). */
const RATE_INTERVAL = '8s';
const PHASE_SECONDS = 45;
const HARD_LIMIT_MS = 300_000;

const started = Date.now();
const log = (message: string): void => {
  process.stdout.write(`[dashboard +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
};
const emergencyStops: (() => void)[] = [];

/** A key of `plan` from the built keys tool. */
async function keyOfPlan(databaseUrl: string, plan: string): Promise<Record<string, string>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['dist/cli/keys.js', 'create', '--plan', plan, '--name', `dashboard-${plan}`, '--json'],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } },
  );
  return { Authorization: `Bearer ${(JSON.parse(stdout) as { key: string }).key}` };
}

/** Closed-loop load at a fixed overall rate; any status is fine (429s are the point, for some). */
function load(
  url: string,
  options: { method?: 'GET' | 'DELETE'; headers?: Record<string, string>; rate: number },
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        method: options.method ?? 'GET',
        headers: options.headers,
        connections: 2,
        overallRate: options.rate,
        duration: PHASE_SECONDS,
      },
      (error: Error | null, result: autocannon.Result) => (error ? reject(error) : resolve(result)),
    );
  });
}

interface Series {
  name: string;
  points: [number, string][];
}

/** The static page: the dashboard's grid (24 columns), one uPlot chart per panel. */
function page(
  panels: { title: string; unit: string; gridPos: GridPos; series: Series[] }[],
): string {
  const uplot = readFileSync(join(ROOT, 'node_modules/uplot/dist/uPlot.iife.min.js'), 'utf8');
  const css = readFileSync(join(ROOT, 'node_modules/uplot/dist/uPlot.min.css'), 'utf8');
  return `<!doctype html><html><head><meta charset="utf-8"><style>${css}
body{margin:0;background:#111217;color:#ccccdc;font:12px Inter,Helvetica,Arial,sans-serif}
header{padding:10px 16px;font-size:16px;color:#fff}header small{color:#8e8e9e;font-size:11px;margin-left:12px}
#grid{position:relative;margin:0 16px 16px}
.panel{position:absolute;box-sizing:border-box;background:#181b1f;border:1px solid #2c3235;border-radius:2px;padding:6px 8px;overflow:hidden}
.panel h2{margin:0 0 4px;font-size:12px;font-weight:500;color:#d8d9da}
.u-legend{font-size:10px;color:#ccccdc}.u-legend .u-marker{width:10px;height:3px}
.u-legend th{font-weight:400}.u-legend td{display:none}
</style><script>${uplot}</script></head><body>
<header>Store Orders Service<small>panels of docker/grafana/dashboards/store-orders.json, data from Prometheus, drawn with uPlot (not Grafana)</small></header>
<div id="grid"></div>
<script>
const panels = ${JSON.stringify(panels)};
const ROW = 38;
const colors = ['#73bf69','#f2cc0c','#5794f2','#ff9830','#f2495c','#b877d9','#8ab8ff','#fade2a','#96d98d','#ffb357','#ca95e5','#ff7383'];
const fmt = (unit, v) => v == null ? '' : unit === 's' ? (v < 1 ? (v * 1000).toFixed(v < 0.01 ? 1 : 0) + ' ms' : v.toFixed(2) + ' s')
  : unit === 'percentunit' ? (v * 100).toFixed(1) + '%' : unit === 'reqps' ? v.toFixed(v < 10 ? 1 : 0) + ' req/s'
  : unit === 'ops' ? v.toFixed(1) + '/s' : String(Math.round(v * 100) / 100);
for (const p of panels) {
  const el = document.createElement('div');
  el.className = 'panel';
  // Grafana's grid: 24 columns, rows of 30 px, 8 px apart.
  const grid = document.getElementById('grid');
  const column = (grid.getBoundingClientRect().width + 8) / 24;
  el.style.left = p.gridPos.x * column + 'px';
  el.style.width = p.gridPos.w * column - 8 + 'px';
  el.style.top = p.gridPos.y * ROW + 'px';
  el.style.height = p.gridPos.h * ROW - 8 + 'px';
  grid.style.height = Math.max(grid.getBoundingClientRect().height, (p.gridPos.y + p.gridPos.h) * ROW) + 'px';
  el.innerHTML = '<h2>' + p.title + '</h2>';
  grid.appendChild(el);
  const times = [...new Set(p.series.flatMap(s => s.points.map(q => q[0])))].sort((a, b) => a - b);
  const data = [times, ...p.series.map(s => { const m = new Map(s.points.map(q => [q[0], Number(q[1])])); return times.map(t => m.has(t) && isFinite(m.get(t)) ? m.get(t) : null); })];
  const perRow = Math.max(1, Math.floor((el.getBoundingClientRect().width - 16) / 210));
  const height = el.getBoundingClientRect().height - 44 - 17 * Math.ceil(p.series.length / perRow);
  new uPlot({
    width: el.getBoundingClientRect().width - 16, height: Math.max(60, height),
    legend: { show: true, live: false },
    cursor: { show: false },
    axes: [
      { stroke: '#8e8e9e', grid: { stroke: '#2c3235' }, ticks: { stroke: '#2c3235' }, font: '10px sans-serif' },
      { stroke: '#8e8e9e', grid: { stroke: '#2c3235' }, ticks: { stroke: '#2c3235' }, font: '10px sans-serif', size: 62, values: (u, vs) => vs.map(v => fmt(p.unit, v)) },
    ],
    scales: { y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    series: [{}, ...p.series.map((s, i) => ({ label: s.name, stroke: colors[i % colors.length], width: 1.5, fill: colors[i % colors.length] + '22', spanGaps: true }))],
  }, data, el);
}
window.rendered = true;
</script></body></html>`;
}

interface GridPos {
  x: number;
  y: number;
  w: number;
  h: number;
}

const legend = (format: string, labels: Record<string, string>): string =>
  format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => labels[name] ?? '');

async function main(): Promise<boolean> {
  const root = makeRootDir();
  const dataDir = join(root, 'postgres');
  let pg: Cluster | undefined;
  let redis: RedisServer | undefined;
  let prometheus: PrometheusServer | undefined;
  const apps: AppProcess[] = [];
  emergencyStops.push(
    () => apps.forEach((a) => void a.stop()),
    () => void redis?.stop(),
    () => void prometheus?.stop(),
    () => pgCtl(dataDir, ['-m', 'immediate', 'stop']),
    () => removeRootDir(root),
  );
  try {
    const pgPort = await freePort();
    pg = await startCluster(dataDir, pgPort);
    const databaseUrl = await createMigratedDatabase(pgPort, 'dashboard');
    await withClient(databaseUrl, (c) =>
      c.query(
        `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
         SELECT g, g, 1, now(), false, CASE WHEN g = 2 THEN 'cancelled' ELSE 'pending' END
           FROM generate_series(1, 300) AS g`,
      ),
    );
    const enterprise = await bearerFromKeysTool(databaseUrl, 'dashboard');
    const free = await keyOfPlan(databaseUrl, 'free');
    redis = await RedisServer.start();
    const urls: string[] = [];
    const targets: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { app, url, metricsUrl } = await AppProcess.start(['node', 'dist/main.js'], {
        DATABASE_URL: databaseUrl,
        REDIS_URL: redis.url,
        METRICS_PORT: '0',
        LOG_LEVEL: 'info',
        // Bans sooner and shorter than in production, to show some within the run.
        RATE_LIMIT_BAN_AFTER: '30',
        RATE_LIMIT_BAN_SECONDS: '20',
      });
      apps.push(app);
      urls.push(url);
      targets.push(new URL(metricsUrl ?? 'http://unknown').host);
    }

    const config = parse(readFileSync(join(ROOT, 'docker/prometheus/prometheus.yml'), 'utf8')) as {
      global: Record<string, string>;
      rule_files: string[];
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    config.global = {
      scrape_interval: `${SCRAPE_SECONDS}s`,
      evaluation_interval: `${SCRAPE_SECONDS}s`,
    };
    config.rule_files = config.rule_files.map((f) => join(ROOT, 'docker/prometheus', f));
    config.scrape_configs[0].static_configs = [{ targets }];
    prometheus = await PrometheusServer.start(config);
    log(`two instances (${urls.join(', ')}), Prometheus at ${prometheus.url}`);

    const from = Date.now() / 1000;
    for (const [phase, scale] of [
      ['calm', 1],
      ['busier', 3],
    ] as const) {
      log(`${phase} traffic for ${PHASE_SECONDS} s…`);
      await Promise.all(
        urls.flatMap((url, i) => [
          load(`${url}/v1/store/orders`, { headers: enterprise, rate: 15 * scale + i * 5 }),
          load(`${url}/v1/store/orders/2`, {
            method: 'DELETE',
            headers: enterprise,
            rate: 8 * scale,
          }),
          load(`${url}/v1/store/orders/${9_000 + i}`, {
            method: 'DELETE',
            headers: enterprise,
            rate: 2 * scale,
          }),
          load(`${url}/v1/store/orders`, { headers: free, rate: 2 * scale }),
          load(`${url}/no/such/path`, { rate: 1 * scale }),
        ]),
      );
    }
    // Two more scrapes, so the last second of traffic is in.
    await new Promise((r) => setTimeout(r, 2 * SCRAPE_SECONDS * 1000));
    const seconds = Math.ceil(Date.now() / 1000 - from) + 4;

    const panels = [];
    const grid = (
      JSON.parse(
        readFileSync(join(ROOT, 'docker/grafana/dashboards/store-orders.json'), 'utf8'),
      ) as { panels: { gridPos: GridPos }[] }
    ).panels;
    for (const [i, panel] of dashboardPanels().entries()) {
      const series: Series[] = [];
      for (const target of panel.targets) {
        const answer = await prometheus.queryRange(
          asSentByGrafana(target.expr, RATE_INTERVAL),
          seconds,
          SCRAPE_SECONDS,
        );
        if (answer.status !== 'success') throw new Error(`${panel.title}: ${answer.error ?? ''}`);
        for (const result of answer.data?.result ?? []) {
          const r = result as { metric: Record<string, string>; values: [number, string][] };
          series.push({ name: legend(target.legendFormat, r.metric), points: r.values });
        }
      }
      log(`${panel.title}: ${series.length} series`);
      panels.push({ title: panel.title, unit: panel.unit, gridPos: grid[i].gridPos, series });
    }

    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    try {
      const tab = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      await tab.setContent(page(panels));
      await tab.waitForFunction('window.rendered === true');
      await tab.screenshot({ path: OUTPUT, fullPage: true });
    } finally {
      await browser.close();
    }
    log(`written to ${OUTPUT} (${Math.round(statSync(OUTPUT).size / 1024)} KB)`);
    return true;
  } finally {
    for (const app of apps) await app.stop();
    await prometheus?.stop();
    await redis?.stop();
    try {
      await pg?.stop();
    } catch {
      pgCtl(dataDir, ['-m', 'immediate', 'stop']);
    }
    removeRootDir(root);
  }
}

runBounded('dashboard', main, HARD_LIMIT_MS, emergencyStops);
