/**
 * What each of the performance changes is worth, measured by undoing it: the built service
 * (dist/) is copied once per change, that one change is reverted in the copy's JavaScript, and
 * every copy is driven in the same turns as the whole service (list 100 and cancel; with the
 * limits in a real redis-server for the Redis changes). Run with `npm run bench:costs` (builds
 * first); prints a Markdown table for docs/performance.md. Fails if a change can no longer be
 * found in the build (the code moved: update the patch here).
 */
import 'reflect-metadata';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  freePort,
  makeRootDir,
  removeRootDir,
  startCluster,
  withClient,
} from '../test/setup/clusters';
import { createMigratedDatabase } from '../test/support/migrated-database';
import { AppProcess } from '../test/support/app-process';
import { bearerFromKeysTool } from '../test/support/auth';
import { RedisServer } from '../test/support/redis-server';
import { runBounded } from '../test/support/bounded-run';
import { driveInTurns, type Contender, type LoadResult, type Scenario } from './load';

const ROOT = join(__dirname, '..');
const HARD_LIMIT_MS = 900_000;

/** One change, undone: in which compiled file, what it is and what it was. */
interface Undo {
  file: string;
  now: string;
  before: string;
}

interface Change {
  name: string;
  /** Measured with the limits in Redis (against the whole service with them there too). */
  redis?: boolean;
  undo: Undo[];
}

const API_HELMET_OPTIONS =
  `{ contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], ` +
  `frameAncestors: ["'none'"] } }, xFrameOptions: { action: 'deny' }, ` +
  `crossOriginOpenerPolicy: false, crossOriginResourcePolicy: false, originAgentCluster: false, ` +
  `referrerPolicy: false, xDnsPrefetchControl: false, xDownloadOptions: false, ` +
  `xPermittedCrossDomainPolicies: false, xXssProtection: false }`;

const CHANGES: Change[] = [
  {
    name: 'log line: one synchronous write(2) per request (pino default)',
    undo: [
      {
        file: 'logging/logging.module.js',
        now: '(0, batched_destination_1.batchedDestination)()',
        before: 'pino_1.default.destination({ dest: 1, sync: true })',
      },
    ],
  },
  {
    name: "log line: sonic-boom's own buffer (`sync: false, minLength: 4096`) instead of batches",
    undo: [
      {
        file: 'logging/logging.module.js',
        now: '(0, batched_destination_1.batchedDestination)()',
        // As it was: sonic-boom's buffer, and a timer flushing it every 200 ms.
        before:
          '(() => { const d = pino_1.default.destination({ dest: 1, sync: false, minLength: 4096 }); ' +
          'setInterval(() => d.flush(), 200).unref(); return d; })()',
      },
    ],
  },
  {
    name: "log line: pino's serialisation of the request's object (not the service's template)",
    undo: [
      {
        file: 'logging/logging.module.js',
        now: '(0, request_log_1.requestLogWriter)(logger, ownLines ? destination : undefined)',
        before: '(0, request_log_1.requestLogWriter)(logger)',
      },
    ],
  },
  {
    name: "response headers: Node's setHeader for the service's own (no setter per name)",
    undo: [
      {
        file: 'common/http/response-header.js',
        now: 'return seen ? symbol : undefined;',
        before: 'return undefined;',
      },
    ],
  },
  {
    name: "router: Swagger UI's, the documents' and health's layers before the API routes",
    undo: [
      {
        file: 'common/http/api-routes-first.js',
        now: 'moveApiRoutesFirst(app.router.stack);',
        before: 'void app;',
      },
    ],
  },
  {
    name: "metrics: prom-client's Counter and Histogram, bound series per method, route and status",
    undo: [
      {
        file: 'metrics/metrics.service.js',
        now: 'this.requests.observe(method, route, status, seconds);',
        before:
          "const u = (this.undo ??= { c: new (require('prom-client').Counter)({ name: 'undo_requests_total', " +
          "help: 'undo', labelNames: ['method', 'route', 'status'], registers: [this.registry] }), " +
          "h: new (require('prom-client').Histogram)({ name: 'undo_duration_seconds', help: 'undo', " +
          "labelNames: ['method', 'route', 'status'], buckets: LATENCY_BUCKETS, registers: [this.registry] }), " +
          's: new Map() }); const k = `${method} ${route} ${status}`; let b = u.s.get(k); ' +
          'if (!b) u.s.set(k, (b = { c: u.c.labels(method, route, status), h: u.h.labels(method, route, status) })); ' +
          'b.c.inc(); b.h.observe(seconds);',
      },
    ],
  },
  {
    name: "security headers: helmet's middleware chain per request (not precomputed)",
    undo: [
      {
        file: 'app.setup.js',
        now: '(0, static_headers_1.setStaticHeaders)(apiSecurityHeaders),',
        before: `(0, helmet_1.default)(${API_HELMET_OPTIONS}),`,
      },
    ],
  },
  {
    name: 'every-request middleware as four router layers (not one)',
    undo: [
      {
        file: 'app.setup.js',
        now: 'app.use((0, one_layer_1.inOneLayer)([',
        before: 'app.use(...([',
      },
    ],
  },
  {
    name: 'guards read the request through `switchToHttp()` (three closures per call)',
    undo: [
      {
        file: 'common/http/http-context.js',
        now: 'return context.getArgByIndex(0);',
        before: 'return context.switchToHttp().getRequest();',
      },
      {
        file: 'common/http/http-context.js',
        now: 'return context.getArgByIndex(1);',
        before: 'return context.switchToHttp().getResponse();',
      },
    ],
  },
  {
    name: 'order id always parsed through BigInt (no fast path for 15 digits or fewer)',
    undo: [
      { file: 'common/int64.js', now: 'if (text.length <= SAFE_LENGTH)', before: 'if (false)' },
    ],
  },
  {
    name: "requests and responses without their properties declared (Node's own classes)",
    undo: [
      {
        file: 'app.setup.js',
        now: 'new http_server_1.ApiExpressAdapter(instance)',
        before: "new (require('@nestjs/platform-express').ExpressAdapter)(instance)",
      },
    ],
  },
  {
    name: 'statements sent unnamed (parsed and planned by PostgreSQL on every request)',
    undo: [
      {
        file: 'orders/orders.service.js',
        now: "{ ...orders_sql_1.FIRST_ORDERS, rowMode: 'array' }",
        before: "{ text: orders_sql_1.FIRST_ORDERS.text, rowMode: 'array' }",
      },
      {
        file: 'orders/orders.service.js',
        now: '{ ...statement, values: [id] }',
        before: '{ text: statement.text, values: [id] }',
      },
    ],
  },
  {
    // The lint ban on Buffer#toString(encoding) (eslint.config.mjs): what one such call at start
    // costs every later request.
    name: "Buffer#toString with an encoding other than UTF-8, called once at start (the lint ban's reason)",
    undo: [
      {
        file: 'main.js',
        now: 'require("reflect-metadata");',
        before: 'require("reflect-metadata"); Buffer.from([1, 2, 3]).toString("base64url");',
      },
    ],
  },
  {
    name: 'limits in Redis: no leases (one script per request, auto-pipelined)',
    redis: true,
    undo: [
      {
        file: 'rate-limit/redis-rate-limit.storage.js',
        now: 'const lease = this.leases.wants(tracker) ? budget_leases_1.MAX_LEASE : 0;',
        before: 'const lease = 0;',
      },
    ],
  },
  {
    name: 'limits in Redis: no leases, no auto-pipelining',
    redis: true,
    undo: [
      {
        file: 'rate-limit/redis-rate-limit.storage.js',
        now: 'const lease = this.leases.wants(tracker) ? budget_leases_1.MAX_LEASE : 0;',
        before: 'const lease = 0;',
      },
      {
        file: 'redis/redis.module.js',
        now: 'enableAutoPipelining: true',
        before: 'enableAutoPipelining: false',
      },
    ],
  },
];

/** A copy of dist/ with the change undone, using the repository's node_modules. */
function buildWithout(change: Change, root: string, index: number): string {
  const dir = join(root, `undo-${index}`);
  mkdirSync(dir);
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  for (const { file, now, before } of change.undo) {
    const path = join(dir, 'dist', file);
    const text = readFileSync(path, 'utf8');
    if (!text.includes(now)) throw new Error(`${change.name}: "${now}" is not in dist/${file}`);
    writeFileSync(path, text.replace(now, before));
  }
  return dir;
}

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
  const pg = await startCluster(join(root, 'postgres'), pgPort);
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
