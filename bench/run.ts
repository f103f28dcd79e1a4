/**
 * Performance benchmark: the built service (`node dist/main.js`) against a minimal `node:http` +
 * `pg` baseline (bench/baseline/server.ts), in the same run, on the same embedded PostgreSQL.
 * Run with `npm run bench` (builds first). Prints the figures, writes BENCHMARKS.md, and exits 1
 * when a target is missed (2 when the run itself breaks or overruns its hard limit).
 *
 * Steps: an embedded PostgreSQL (temp dir, free port) migrated by the built migrator; an
 * enterprise key issued by the built `keys` tool; both servers started; the table seeded to 100,
 * then 1,000 orders, each size loaded with autocannon (service, then baseline); then 1,000,000
 * orders and one whole list from the service, timed, with the server's memory watched.
 */
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  Cluster,
  freePort,
  makeRootDir,
  pgCtl,
  removeRootDir,
  startCluster,
  urlFor,
  withClient,
} from '../test/setup/clusters';
import { httpRequest } from '../test/support/http';
import { AppProcess } from '../test/support/app-process';
import { bearerFromKeysTool } from '../test/support/auth';
import { runBounded } from '../test/support/bounded-run';
import { fetchLargeList } from './large-list';
import { driveInTurns, type Scenario } from './load';
import { compareTracing } from './tracing';
import {
  Check,
  MB,
  ScenarioResult,
  checkLines,
  largeListLines,
  machine,
  scenarioTable,
  writeBenchmarks,
} from './report';

const ROOT = join(__dirname, '..');
const LARGE_LIST_ORDERS = 1_000_000;
const LARGE_LIST_TIMEOUT_MS = 60_000;
/** Whatever happens, the run ends by then. */
const HARD_LIMIT_MS = 300_000;
/** Seeded as already cancelled: its DELETE is the idempotent 204, repeatable under load. */
const CANCEL_ID = '2';
const INT64_MAX = '9223372036854775807';

const TARGETS = {
  list100: 0.7,
  list1000: 0.8,
  cancel: 0.5,
  firstByteMs: 1_000,
  rssGrowthBytes: 100 * MB,
};

const started = Date.now();
const log = (message: string): void => {
  process.stdout.write(`[bench +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
};
/** What the hard limit must still stop (synchronously) if the run is stuck. */
const emergencyStops: (() => void)[] = [];

/**
 * Grows the table to `total` orders: ids 1, 2, … plus one at INT64_MAX (so every list carries an
 * id beyond 2^53), every status, and nulls in each nullable column. Id 2 is cancelled.
 */
async function growOrders(databaseUrl: string, total: number): Promise<void> {
  await withClient(databaseUrl, async (c) => {
    await c.query(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
       VALUES ($1, $1, 1, NULL, false, 'pending') ON CONFLICT (id) DO NOTHING`,
      [INT64_MAX],
    );
    const { rows } = await c.query<{ n: string }>('SELECT count(*) AS n FROM orders');
    const from = Number(rows[0].n);
    await c.query(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
       SELECT g,
              CASE WHEN g % 10 = 0 THEN NULL ELSE g * 7 END,
              CASE WHEN g % 10 = 1 THEN NULL ELSE g % 5 + 1 END,
              CASE WHEN g % 4 = 0 THEN NULL
                   ELSE timestamptz '2026-11-22T10:00:00Z' + g * interval '1 minute' END,
              g % 2 = 0,
              (ARRAY['pending', 'shipped', 'cancelled'])[g % 3 + 1]
         FROM generate_series($1::bigint, $2::bigint) AS g`,
      [from, total - 1],
    );
    await c.query('VACUUM ANALYZE orders');
  });
}

/** The service as production runs it, with default settings. */
function startService(databaseUrl: string): ReturnType<typeof AppProcess.start> {
  return AppProcess.start(['node', 'dist/main.js'], {
    DATABASE_URL: databaseUrl,
    // The default level: its "listening on" line tells the port it picked.
    LOG_LEVEL: 'info',
  });
}

/** Where the servers listen. */
interface Servers {
  service: string;
  baseline: string;
  /** Bare NestJS (bench/reference/bare-nest.ts): the framework's own ceiling, for reference. */
  bareNest: string;
}

/** Every server must give the same answers, or comparing their speed means nothing. */
async function checkSameAnswers(servers: Servers, headers: Record<string, string>): Promise<void> {
  const service = await httpRequest(`${servers.service}/v1/store/orders`, { headers });
  for (const [name, url] of Object.entries(servers)) {
    const other = await httpRequest(`${url}/v1/store/orders`, { headers });
    if (service.status !== 200 || other.status !== 200 || service.body !== other.body) {
      throw new Error(
        `the lists of the service and the ${name} differ: ${service.status} ` +
          `${service.body.slice(0, 200)} / ${other.status} ${other.body.slice(0, 200)}`,
      );
    }
  }
  if (!service.body.includes(`{"id":${INT64_MAX},"petId":${INT64_MAX},`)) {
    throw new Error('the list does not carry INT64_MAX exactly');
  }
  for (const [name, url] of Object.entries(servers)) {
    const res = await httpRequest(`${url}/v1/store/orders/${CANCEL_ID}`, {
      method: 'DELETE',
      headers,
    });
    if (res.status !== 204) throw new Error(`${name}: cancel answered ${res.status}`);
  }
}

/** The scenario against every server, in turns: never two at once. */
async function compare(
  scenario: Scenario,
  servers: Servers,
  headers: Record<string, string>,
): Promise<ScenarioResult> {
  log(`${scenario.name}: service, baseline and bare NestJS in turns…`);
  const { service, baseline, bareNest } = await driveInTurns(servers, headers, scenario);
  return {
    name: scenario.name,
    service,
    baseline,
    bareNest,
    ratio: service.requestsPerSecond / baseline.requestsPerSecond,
    bareNestRatio: bareNest.requestsPerSecond / baseline.requestsPerSecond,
  };
}

const list = (name: string): Scenario => ({
  name,
  method: 'GET',
  path: '/v1/store/orders',
  status: 200,
});
const cancel: Scenario = {
  name: 'cancel',
  method: 'DELETE',
  path: `/v1/store/orders/${CANCEL_ID}`,
  status: 204,
};

async function main(): Promise<boolean> {
  log(`machine: ${machine()}`);
  const root = makeRootDir();
  const dataDir = join(root, 'postgres');
  const pgPort = await freePort();
  let pg: Cluster | undefined;
  let service: AppProcess | undefined;
  let baseline: AppProcess | undefined;
  let bareNest: AppProcess | undefined;
  emergencyStops.push(
    () => void service?.stop(),
    () => void baseline?.stop(),
    () => void bareNest?.stop(),
    () => pgCtl(dataDir, ['-m', 'immediate', 'stop']),
    () => removeRootDir(root),
  );
  try {
    pg = await startCluster(dataDir, pgPort);
    await withClient(urlFor(pgPort, 'postgres'), (c) => c.query('CREATE DATABASE bench'));
    const databaseUrl = urlFor(pgPort, 'bench');
    await promisify(execFile)('node', ['dist/database/migrate.js'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl },
    });
    await growOrders(databaseUrl, 100);
    const headers = await bearerFromKeysTool(databaseUrl, 'bench');

    const launchedService = await startService(databaseUrl);
    service = launchedService.app;
    const launchedBaseline = await AppProcess.start(
      ['node', '--require', '@swc-node/register', 'bench/baseline/server.ts'],
      { DATABASE_URL: databaseUrl },
    );
    baseline = launchedBaseline.app;
    const launchedBareNest = await AppProcess.start(
      ['node', '--require', '@swc-node/register', 'bench/reference/bare-nest.ts'],
      { DATABASE_URL: databaseUrl },
    );
    bareNest = launchedBareNest.app;
    const servers: Servers = {
      service: launchedService.url,
      baseline: launchedBaseline.url,
      bareNest: launchedBareNest.url,
    };
    await checkSameAnswers(servers, headers);
    log(
      `service at ${servers.service}, baseline at ${servers.baseline}, ` +
        `bare NestJS at ${servers.bareNest}`,
    );

    const scenarios: ScenarioResult[] = [];
    scenarios.push(await compare(list('list 100'), servers, headers));
    scenarios.push(await compare(cancel, servers, headers));
    await growOrders(databaseUrl, 1_000);
    await checkSameAnswers(servers, headers);
    scenarios.push(await compare(list('list 1,000'), servers, headers));

    // The baseline answers from one buffered result: not for a million rows. The service is
    // restarted, so that its memory is measured from a fresh start, not from a heap the load
    // above has already grown.
    const tracing = await compareTracing(
      databaseUrl,
      servers.service,
      headers,
      [list('list 1,000'), cancel],
      log,
    );
    await bareNest.stop();
    await baseline.stop();
    await service.stop();
    log(`seeding ${LARGE_LIST_ORDERS.toLocaleString('en-US')} orders…`);
    await growOrders(databaseUrl, LARGE_LIST_ORDERS);
    const fresh = await startService(databaseUrl);
    service = fresh.app;
    log('whole list from a freshly started service…');
    const largeList = await fetchLargeList(
      fresh.url,
      headers,
      service.pid,
      LARGE_LIST_ORDERS,
      LARGE_LIST_TIMEOUT_MS,
    );

    const byName = new Map(scenarios.map((s) => [s.name, s]));
    const ratioCheck = (name: string, target: number): Check => {
      const ratio = byName.get(name)?.ratio ?? 0;
      return {
        name: `${name} req/s vs baseline`,
        target: `≥ ${target.toFixed(2)}×`,
        actual: `${ratio.toFixed(2)}×`,
        pass: ratio >= target,
      };
    };
    const checks: Check[] = [
      ratioCheck('list 100', TARGETS.list100),
      ratioCheck('list 1,000', TARGETS.list1000),
      ratioCheck('cancel', TARGETS.cancel),
      {
        name: '1,000,000-order list is whole',
        target: 'one JSON array of every order',
        actual: largeList.whole ? 'whole' : `${largeList.orders} orders, not whole`,
        pass: largeList.whole,
      },
      {
        name: '1,000,000-order list time to first byte',
        target: `< ${TARGETS.firstByteMs} ms`,
        actual: `${largeList.firstByteMs.toFixed(0)} ms`,
        pass: largeList.firstByteMs < TARGETS.firstByteMs,
      },
      {
        name: '1,000,000-order list peak RSS growth',
        target: `< ${TARGETS.rssGrowthBytes / MB} MB`,
        actual: `${(largeList.peakRssGrowthBytes / MB).toFixed(1)} MB`,
        pass: largeList.peakRssGrowthBytes < TARGETS.rssGrowthBytes,
      },
    ];

    process.stdout.write(`\n${scenarioTable(scenarios)}\n\n`);
    process.stdout.write(
      `${largeListLines(largeList, LARGE_LIST_ORDERS).join('\n')}\n\n${checkLines(checks).join('\n')}\n`,
    );
    writeBenchmarks(join(ROOT, 'BENCHMARKS.md'), {
      date: new Date(),
      scenarios,
      largeList,
      largeListOrders: LARGE_LIST_ORDERS,
      checks,
    });
    appendFileSync(join(ROOT, 'BENCHMARKS.md'), `\n${tracing}`);
    process.stdout.write(`\n${tracing}\n`);
    log('written to BENCHMARKS.md');
    const ok = checks.every((c) => c.pass);
    log(ok ? 'every target met' : 'a target was missed');
    return ok;
  } finally {
    await service?.stop();
    await baseline?.stop();
    await bareNest?.stop();
    try {
      await pg?.stop();
    } catch {
      try {
        pgCtl(dataDir, ['-m', 'immediate', 'stop']);
      } catch {
        // Already stopped.
      }
    }
    removeRootDir(root);
  }
}

runBounded('bench', main, HARD_LIMIT_MS, emergencyStops);
