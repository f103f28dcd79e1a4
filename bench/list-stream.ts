/**
 * The v1 list as the service streams it (keyset batches, no connection held between them) against
 * the same list on `pg-query-stream` (bench/list-stream/pg-query-stream-list.ts, preloaded), in
 * one run, on one embedded PostgreSQL, every contender started the same way (from the sources):
 * list 1,000 req/s in turns; the 1,000,000-order list's first byte and peak RSS growth, plain and
 * gzip, in turns; and what `DATABASE_POOL_SIZE` stalled readers of that list cost every other
 * client (cancels, readiness, another client's whole list) on each. Run with
 * `npm run bench:list-stream`; prints Markdown tables for docs/performance.md.
 */
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { join } from 'node:path';
import {
  freePort,
  makeRootDir,
  pgCtl,
  removeRootDir,
  SCRAM_LOGIN,
  startCluster,
  withClient,
} from '../test/setup/clusters';
import { AppProcess } from '../test/support/app-process';
import { bearerFor } from '../test/support/auth';
import { runBounded } from '../test/support/bounded-run';
import { httpRequest } from '../test/support/http';
import { createMigratedDatabase } from '../test/support/migrated-database';
import { fetchLargeList, type LargeListResult } from './large-list';
import { driveInTurns, type LoadResult } from './load';
import { growOrders } from './orders';
import { machine } from './report';

const HARD_LIMIT_MS = 1_500_000;
const LARGE_LIST_ORDERS = 1_000_000;
const LARGE_LIST_TIMEOUT_MS = 120_000;
const POOL_SIZE = 10;
/** Rounds of the 1,000,000-order list per contender and encoding, in turns. */
const LARGE_LIST_ROUNDS = 2;
const CANCELS_UNDER_STALL = 10;
/** Seeded as already cancelled: its DELETE is the idempotent 204. */
const CANCEL_PATH = '/v1/store/orders/2';

const SOURCES = ['node', '--require', '@swc-node/register'];
const VARIANT = ['--require', './bench/list-stream/pg-query-stream-list.ts'];

/** How each contender is started: the service's own list, or one of pg-query-stream's. */
const CONTENDERS = {
  keyset: { preload: [], env: {} },
  /** The first 1,001 orders in one query, the rest from a portal, within half the pool. */
  queryStream: { preload: VARIANT, env: {} },
  /** The same, each portal's connection straight from the pool. */
  queryStreamWholePool: { preload: VARIANT, env: { LIST_STREAM_SHARE: 'off' } },
  /** Every list from the portal (no first query), within half the pool. */
  queryStreamOnly: { preload: VARIANT, env: { LIST_STREAM_FIRST: 'off' } },
} as const;
type Name = keyof typeof CONTENDERS;
const NAMES = Object.keys(CONTENDERS) as Name[];
/** The contenders that differ in what a stalled reader holds. */
const STALL_NAMES: Name[] = ['keyset', 'queryStream', 'queryStreamWholePool'];

const started = Date.now();
const log = (message: string): void => {
  process.stdout.write(
    `[list-stream +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`,
  );
};
const emergencyStops: (() => void)[] = [];
const MB = 1024 * 1024;

/** The body of a whole list, hashed as it arrives (a million orders are 111 MB of text). */
function listDigest(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/store/orders`, { headers, agent: false }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`list: ${String(res.statusCode)}`));
      const hash = createHash('sha256');
      res.on('data', (chunk: Buffer) => hash.update(chunk));
      res.on('end', () => resolve(hash.digest('hex')));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function checkSameLists(
  urls: Record<Name, string>,
  headers: Record<string, string>,
): Promise<void> {
  const digests = await Promise.all(NAMES.map((name) => listDigest(urls[name], headers)));
  if (new Set(digests).size !== 1) {
    throw new Error(`the lists differ: ${NAMES.map((n, i) => `${n} ${digests[i]}`).join(', ')}`);
  }
}

interface StalledReader {
  req: ClientRequest;
  /** The answer's status if its first bytes came within the patience, else 0 (still waiting). */
  status: number;
}

/**
 * A client that asks for the whole list and reads its first bytes, then nothing more (the server
 * is held by back-pressure once the kernel's buffers are full). Resolves when the first bytes came,
 * or after `patienceMs` without them (the request waits in the server: status 0).
 */
function stalledReader(
  url: string,
  headers: Record<string, string>,
  patienceMs: number,
): Promise<StalledReader> {
  return new Promise((resolve) => {
    const req = request(
      `${url}/v1/store/orders`,
      { headers, agent: false },
      (res: IncomingMessage) => {
        res.once('data', () => {
          res.pause();
          clearTimeout(timer);
          resolve({ req, status: res.statusCode ?? 0 });
        });
      },
    );
    req.on('error', () => undefined);
    req.end();
    const timer = setTimeout(() => resolve({ req, status: 0 }), patienceMs);
  });
}

/** Backends of the service's database busy in a query or a transaction (not idle). */
async function busyBackends(databaseUrl: string): Promise<number> {
  return withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()
          AND application_name = 'store-orders-service' AND state <> 'idle'`,
    );
    return rows[0].n;
  });
}

interface Timed {
  status: number | string;
  ms: number;
  firstByteMs?: number;
}

/** `work`'s status and time (its own `ms` if it measures it, else the time it took). */
async function timed(work: () => Promise<Partial<Timed> & { status: number }>): Promise<Timed> {
  const t0 = performance.now();
  try {
    const result = await work();
    return { ms: performance.now() - t0, ...result };
  } catch (error) {
    return {
      status: error instanceof Error ? error.message : String(error),
      ms: performance.now() - t0,
    };
  }
}

interface StallResult {
  /** Stalled readers whose first bytes came within 5 s. */
  readersAnswered: number;
  busyBackends: number;
  cancels: Timed[];
  ready: Timed;
  otherList: Timed;
}

/**
 * `POOL_SIZE` stalled readers of the 1,000,000-order list on one contender; meanwhile another
 * client's cancels (one after the other), readiness, and another client's whole list.
 */
async function underStalledReaders(
  url: string,
  pid: number,
  headers: Record<string, string>,
  databaseUrl: string,
): Promise<StallResult> {
  const readers = await Promise.all(
    Array.from({ length: POOL_SIZE }, () => stalledReader(url, headers, 5_000)),
  );
  try {
    // The server fills the kernel's buffers of each, then waits on its client.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const busy = await busyBackends(databaseUrl);
    const otherList = timed(() =>
      fetchLargeList(url, headers, pid, LARGE_LIST_ORDERS, LARGE_LIST_TIMEOUT_MS).then(
        (r: LargeListResult) => ({
          status: r.whole ? 200 : -1,
          firstByteMs: r.firstByteMs,
          ms: r.totalMs,
        }),
      ),
    );
    const cancels: Timed[] = [];
    for (let i = 0; i < CANCELS_UNDER_STALL; i++) {
      cancels.push(
        await timed(() => httpRequest(`${url}${CANCEL_PATH}`, { method: 'DELETE', headers })),
      );
    }
    const ready = await timed(() => httpRequest(`${url}/health/ready`));
    const other = await otherList;
    return {
      readersAnswered: readers.filter((r) => r.status === 200).length,
      busyBackends: busy,
      cancels,
      ready,
      otherList: other,
    };
  } finally {
    for (const reader of readers) reader.req.destroy();
    // Until the service has let go of them (cut connections, portals closed).
    for (let i = 0; i < 100 && (await busyBackends(databaseUrl)) > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function report(
  list1000: Record<Name, LoadResult>,
  large: Record<Name, LargeListResult[]>,
  stalls: Partial<Record<Name, StallResult>>,
): string {
  const lines = [
    `${machine()}, ${new Date().toISOString()}`,
    '',
    '| contender | list 1,000 req/s (÷ keyset) | p99 ms | 1,000,000 list first byte plain / gzip, median ms | peak RSS growth plain / gzip, max MB | whole list plain, median s |',
    '|---|--:|--:|--:|--:|--:|',
  ];
  for (const name of NAMES) {
    const l = list1000[name];
    const plain = large[name].filter((r) => r.encoding === 'identity');
    const gzip = large[name].filter((r) => r.encoding === 'gzip');
    const firstByte = (rs: LargeListResult[]): string => fmt(median(rs.map((r) => r.firstByteMs)));
    const rss = (rs: LargeListResult[]): string =>
      fmt(Math.max(...rs.map((r) => r.peakRssGrowthBytes)) / MB, 1);
    lines.push(
      `| ${name} | ${fmt(l.requestsPerSecond)} (${(l.requestsPerSecond / list1000.keyset.requestsPerSecond).toFixed(2)}×) | ${fmt(l.p99Ms)} | ${firstByte(plain)} / ${firstByte(gzip)} | ${rss(plain)} / ${rss(gzip)} | ${fmt(median(plain.map((r) => r.totalMs)) / 1000, 2)} |`,
    );
  }
  lines.push(
    '',
    `${POOL_SIZE} stalled readers of the 1,000,000-order list (pool of ${POOL_SIZE}), meanwhile ${CANCELS_UNDER_STALL} cancels one after the other, readiness, and another client's whole list:`,
    '',
    "| contender | stalled readers answered | backends busy | cancels: statuses | cancel median / max ms | readiness | other client's whole list |",
    '|---|--:|--:|---|--:|---|---|',
  );
  for (const name of STALL_NAMES) {
    const s = stalls[name];
    if (!s) continue;
    const statuses = new Map<string, number>();
    for (const c of s.cancels)
      statuses.set(String(c.status), (statuses.get(String(c.status)) ?? 0) + 1);
    const ms = s.cancels.map((c) => c.ms);
    lines.push(
      `| ${name} | ${s.readersAnswered} of ${POOL_SIZE} | ${s.busyBackends} | ${[...statuses].map(([k, v]) => `${v} × ${k}`).join(', ')} | ${fmt(median(ms))} / ${fmt(Math.max(...ms))} | ${String(s.ready.status)} in ${fmt(s.ready.ms)} ms | ${String(s.otherList.status)}, first byte ${s.otherList.firstByteMs === undefined ? '–' : fmt(s.otherList.firstByteMs)} ms, done in ${fmt(s.otherList.ms / 1000, 1)} s |`,
    );
  }
  return lines.join('\n');
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
    const databaseUrl = await createMigratedDatabase(pgPort, 'bench');
    await growOrders(databaseUrl, 1_000);
    const headers = await bearerFor(databaseUrl);
    const urls = {} as Record<Name, string>;
    const pids = {} as Record<Name, number>;
    for (const name of NAMES) {
      const { preload, env } = CONTENDERS[name];
      const { app, url } = await AppProcess.start([...SOURCES, ...preload, 'src/main.ts'], {
        DATABASE_URL: databaseUrl,
        DATABASE_POOL_SIZE: String(POOL_SIZE),
        LOG_LEVEL: 'info',
        ...env,
      });
      app.discardOutput();
      apps.push(app);
      urls[name] = url;
      pids[name] = app.pid;
    }
    await checkSameLists(urls, headers);
    const contenders = Object.fromEntries(NAMES.map((n) => [n, { url: urls[n], headers }]));

    log('list 1,000: every contender in turns…');
    const list1000 = await driveInTurns(
      contenders as Record<Name, { url: string; headers: Record<string, string> }>,
      {
        name: 'list 1,000',
        method: 'GET',
        path: '/v1/store/orders',
        status: 200,
      },
    );

    log(`seeding ${fmt(LARGE_LIST_ORDERS)} orders…`);
    await growOrders(databaseUrl, LARGE_LIST_ORDERS);
    await checkSameLists(urls, headers);
    const large = Object.fromEntries(NAMES.map((n) => [n, [] as LargeListResult[]])) as Record<
      Name,
      LargeListResult[]
    >;
    for (let round = 0; round < LARGE_LIST_ROUNDS; round++) {
      const turn = round % 2 === 0 ? NAMES : [...NAMES].reverse();
      for (const gzip of [false, true]) {
        for (const name of turn) {
          log(`1,000,000-order list, ${name}${gzip ? ', gzip' : ''}…`);
          large[name].push(
            await fetchLargeList(
              urls[name],
              headers,
              pids[name],
              LARGE_LIST_ORDERS,
              LARGE_LIST_TIMEOUT_MS,
              gzip,
            ),
          );
        }
      }
    }

    const stalls: Partial<Record<Name, StallResult>> = {};
    for (const name of STALL_NAMES) {
      log(`${POOL_SIZE} stalled readers, ${name}…`);
      stalls[name] = await underStalledReaders(urls[name], pids[name], headers, databaseUrl);
    }
    process.stdout.write(`\n${report(list1000, large, stalls)}\n`);
    return NAMES.every((n) => large[n].every((r) => r.whole));
  } finally {
    for (const app of apps) await app.stop();
    await pg.stop();
    removeRootDir(root);
  }
}

runBounded('bench:list-stream', main, HARD_LIMIT_MS, emergencyStops);
