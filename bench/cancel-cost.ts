/**
 * What an index holding `status` would cost the cancels that change an order (docs/performance.md,
 * "Write cost, and why no index serves a status"): two copies of 1,000,000 spread orders on one
 * embedded PostgreSQL, one with the migrations' indexes, one with `(status, id)` and
 * `(status, ship_date, id)` besides (what full pages of a sparse status would need); the built
 * service on each; `DELETE`s of pending orders, each an UPDATE that writes (the bench's cancel
 * repeats one already cancelled, whose UPDATE matches no row), from CONNECTIONS connections, the
 * two services in turns (A B B A …), each on ids of its own. Prints cancels/s and the share of
 * heap-only updates per copy. Run with `npm run bench:cancel-cost` (builds first).
 */
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import {
  freePort,
  makeRootDir,
  pgCtl,
  removeRootDir,
  SCRAM_LOGIN,
  startCluster,
  urlFor,
  withClient,
} from '../test/setup/clusters';
import { AppProcess } from '../test/support/app-process';
import { bearerFromKeysTool } from '../test/support/auth';
import { runBounded } from '../test/support/bounded-run';
import { createMigratedDatabase } from '../test/support/migrated-database';
import { seedPageOrders } from '../test/support/page-orders';
import { machine } from './report';

const HARD_LIMIT_MS = 900_000;
const ORDERS = 1_000_000;
const CONNECTIONS = 10;
const SLICES = 12;
const SLICE_MS = 4_000;
/** Cancels per service before the timing, on ids of their own. */
const WARMUP = 2_000;
const STATUS_INDEXES = ['(status, id)', '(status, ship_date, id)'];

const started = Date.now();
const log = (message: string): void => {
  process.stdout.write(
    `[cancel-cost +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`,
  );
};
const emergencyStops: (() => void)[] = [];

interface Copy {
  name: string;
  database: string;
  url: string;
  headers: Record<string, string>;
  cancels: number;
  ms: number;
}

/** One DELETE on a keep-alive connection; its status code. */
function cancel(url: string, headers: Record<string, string>, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'DELETE', headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`DELETE ${url}: no answer within 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

/** Cancels from CONNECTIONS connections, each taking the next id, until `ids` or time run out. */
async function cancelAll(copy: Copy, ids: Iterator<string>, untilMs: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let done = 0;
  try {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        for (let id = ids.next(); !id.done && performance.now() < untilMs; id = ids.next()) {
          const status = await cancel(
            `${copy.url}/v1/store/orders/${id.value}`,
            copy.headers,
            agent,
          );
          if (status !== 204) throw new Error(`${copy.name}: cancel answered ${status}`);
          done++;
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return done;
}

/** The orders table's updates and heap-only updates so far. */
async function updates(databaseUrl: string): Promise<{ all: number; hot: number }> {
  return withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ all: string; hot: string }>(
      `SELECT n_tup_upd AS all, n_tup_hot_upd AS hot FROM pg_stat_user_tables
        WHERE relname = 'orders'`,
    );
    return { all: Number(rows[0].all), hot: Number(rows[0].hot) };
  });
}

async function main(): Promise<boolean> {
  log(`machine: ${machine()}`);
  const root = makeRootDir();
  const dataDir = join(root, 'postgres');
  const apps: AppProcess[] = [];
  emergencyStops.push(
    () => apps.forEach((app) => void app.stop()),
    () => pgCtl(dataDir, ['-m', 'immediate', 'stop']),
    () => removeRootDir(root),
  );
  const pgPort = await freePort();
  const pg = await startCluster(dataDir, pgPort, SCRAM_LOGIN);
  try {
    const source = await createMigratedDatabase(pgPort, 'source');
    log(`seeding ${ORDERS.toLocaleString('en-US')} spread orders…`);
    await seedPageOrders(source, ORDERS);
    const copies: Copy[] = [];
    for (const [name, database] of [
      ['the service’s indexes', 'plain'],
      ['status indexed too', 'status'],
    ]) {
      await withClient(urlFor(pgPort, 'postgres'), (c) =>
        c.query(`CREATE DATABASE ${database} TEMPLATE source`),
      );
      copies.push({ name, database, url: '', headers: {}, cancels: 0, ms: 0 });
    }
    const statusUrl = urlFor(pgPort, 'status');
    for (const columns of STATUS_INDEXES) {
      await withClient(statusUrl, (c) => c.query(`CREATE INDEX ON orders ${columns}`));
    }
    const pending = await withClient(source, async (c) => {
      const { rows } = await c.query<{ id: string }>(
        `SELECT id::text FROM orders WHERE status = 'pending' ORDER BY hashint8(id)`,
      );
      return rows.map((row) => row.id);
    });
    for (const copy of copies) {
      const databaseUrl = urlFor(pgPort, copy.database);
      await withClient(databaseUrl, (c) => c.query('VACUUM ANALYZE orders'));
      copy.headers = await bearerFromKeysTool(databaseUrl, 'cancel-cost');
      const { app, url } = await AppProcess.start(['node', 'dist/main.js'], {
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'info',
      });
      app.discardOutput();
      apps.push(app);
      copy.url = url;
    }
    await withClient(source, (c) => c.query('CHECKPOINT'));
    // Both copies hold the same orders: each cancels ids the other does not, from one list.
    for (const copy of copies) await cancelAll(copy, pending.splice(0, WARMUP).values(), Infinity);
    const ids = pending.values();
    const before = await Promise.all(copies.map((c) => updates(urlFor(pgPort, c.database))));
    for (let slice = 0; slice < SLICES; slice++) {
      const copy = copies[slice % 4 === 0 || slice % 4 === 3 ? 0 : 1];
      const start = performance.now();
      const done = await cancelAll(copy, ids, start + SLICE_MS);
      copy.cancels += done;
      copy.ms += performance.now() - start;
      log(`${copy.name}: ${((1000 * done) / (performance.now() - start)).toFixed(0)} cancels/s`);
    }
    const rows: string[] = [];
    for (const [i, copy] of copies.entries()) {
      const databaseUrl = urlFor(pgPort, copy.database);
      await withClient(databaseUrl, (c) => c.query('SELECT pg_stat_force_next_flush()'));
      const after = await updates(databaseUrl);
      const hot = (after.hot - before[i].hot) / Math.max(1, after.all - before[i].all);
      rows.push(
        `| ${copy.name} | ${((1000 * copy.cancels) / copy.ms).toFixed(0)} | ${(100 * hot).toFixed(0)} % |`,
      );
    }
    const [plain, status] = copies;
    process.stdout.write(
      `\n| orders table | cancels/s | heap-only updates |\n|---|--:|--:|\n${rows.join('\n')}\n\n` +
        `status indexed ÷ not: ${(status.cancels / status.ms / (plain.cancels / plain.ms)).toFixed(2)}×\n`,
    );
    return true;
  } finally {
    for (const app of apps) await app.stop();
    await pg.stop();
    removeRootDir(root);
  }
}

runBounded('bench:cancel-cost', main, HARD_LIMIT_MS, emergencyStops);
