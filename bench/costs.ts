/**
 * What each of the performance changes is worth, measured by undoing it: the built service
 * (dist/) is copied once per change, that one change is reverted in the copy's JavaScript, and
 * every copy is driven in the same turns as the whole service (list 100 and cancel; with the
 * limits in a real redis-server for the Redis changes). Run with `npm run bench:costs` (builds
 * first); prints a Markdown table for docs/performance.md. Fails if a change can no longer be
 * found in the build (the code moved: update the patch here).
 */
import 'reflect-metadata';
import { join } from 'node:path';
import {
  freePort,
  makeRootDir,
  removeRootDir,
  SCRAM_LOGIN,
  startCluster,
  withClient,
} from '../test/setup/clusters';
import { createMigratedDatabase } from '../test/support/migrated-database';
import { AppProcess } from '../test/support/app-process';
import { bearerFromKeysTool } from '../test/support/auth';
import { RedisServer } from '../test/support/redis-server';
import { runBounded } from '../test/support/bounded-run';
import { buildWithout, CHANGES, ROOT } from './changes';
import { driveInTurns, type Contender, type LoadResult, type Scenario } from './load';

const HARD_LIMIT_MS = 900_000;

const scenarios: Scenario[] = [
  { name: 'list 100', method: 'GET', path: '/v1/store/orders', status: 200 },
  { name: 'cancel', method: 'DELETE', path: '/v1/store/orders/2', status: 204 },
];

const log = (message: string): void => void process.stdout.write(`[costs] ${message}\n`);
const emergencyStops: (() => void)[] = [];

async function main(): Promise<boolean> {
  const root = makeRootDir();
  const apps: AppProcess[] = [];
  let redis: RedisServer | undefined;
  emergencyStops.push(
    () => apps.forEach((app) => void app.stop()),
    () => void redis?.stop(),
  );
  const pgPort = await freePort();
  const pg = await startCluster(join(root, 'postgres'), pgPort, SCRAM_LOGIN);
  try {
    const databaseUrl = await createMigratedDatabase(pgPort, 'bench');
    await withClient(databaseUrl, (c) =>
      c.query(
        `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
         SELECT g, g * 7, g % 5 + 1, timestamptz '2026-11-22T10:00:00Z' + g * interval '1 minute',
                g % 2 = 0, CASE WHEN g = 2 THEN 'cancelled' ELSE 'pending' END
           FROM generate_series(1, 100) AS g`,
      ),
    );
    const headers = await bearerFromKeysTool(databaseUrl, 'bench');
    redis = await RedisServer.start();
    const start = async (cwd: string, env: Record<string, string> = {}): Promise<Contender> => {
      const { app, url } = await AppProcess.start(
        ['node', 'dist/main.js'],
        // PAGE_POOL_SIZE 1: v2's pages are not measured here, and each process keeps its page
        // connections open from the start: 16 processes of 5 would take most of PostgreSQL's 100.
        { DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', PAGE_POOL_SIZE: '1', ...env },
        cwd,
      );
      apps.push(app);
      app.discardOutput();
      return { url, headers };
    };
    const redisEnv = { REDIS_URL: redis.url };
    const inProcess: Record<string, Contender> = { whole: await start(ROOT) };
    const inRedis: Record<string, Contender> = { whole: await start(ROOT, redisEnv) };
    for (const [i, change] of CHANGES.entries()) {
      const dir = buildWithout(change, root, i);
      (change.redis ? inRedis : inProcess)[change.name] = await start(
        dir,
        change.redis ? redisEnv : {},
      );
    }

    const rows: string[] = [];
    for (const [where, contenders] of [
      ['in process', inProcess],
      ['in Redis', inRedis],
    ] as const) {
      const results: Record<string, Record<string, LoadResult>> = {};
      for (const scenario of scenarios) {
        log(
          `${scenario.name}, limits ${where}: ${Object.keys(contenders).length} builds in turns…`,
        );
        results[scenario.name] = await driveInTurns(contenders, scenario);
      }
      for (const name of Object.keys(contenders)) {
        if (name === 'whole') continue;
        const cells = scenarios.map((s) => {
          const undone = results[s.name][name].requestsPerSecond;
          const whole = results[s.name].whole.requestsPerSecond;
          return `${undone.toFixed(0)} → ${whole.toFixed(0)} (${((whole / undone - 1) * 100).toFixed(0)}%)`;
        });
        rows.push(`| ${name} | ${cells.join(' | ')} |`);
      }
    }
    const table = [
      '| undone (before) | list 100 req/s: before → now | cancel req/s: before → now |',
      '|---|--:|--:|',
      ...rows,
    ].join('\n');
    process.stdout.write(`\n${table}\n`);
    return true;
  } finally {
    for (const app of apps) await app.stop();
    await redis?.stop();
    await pg.stop();
    removeRootDir(root);
  }
}

runBounded('bench:costs', main, HARD_LIMIT_MS, emergencyStops);
