/**
 * Instructions per request, the service against bare NestJS: each server run under valgrind
 * (`valgrind --tool=callgrind`), counting only while the measured requests are served, after a
 * warm-up that brings V8 near its steady state. Unlike requests per second on a shared 2-core
 * machine, whose speed moves by tens of per cent between minutes, a count changes little between
 * runs on a quiet machine: two processes of one build differ by about 1.5% on the main thread
 * (the event loop, which bounds a saturated server's rate), more in all threads together (V8's
 * background compiler). On a loaded one they can differ by far more (docs/performance.md).
 *
 *   npm run bench:instructions -- [cancel|list] [service|bare ...]
 *   npm run bench:instructions -- [cancel|list] --costs [part of a change's name ...]
 *
 * Prints, per server, instructions per request on the main thread and in all threads, and bare
 * NestJS ÷ the service: the ratio the bench's targets are about, as far as CPU decides it.
 *
 * With `--costs`, the servers are the whole service, a copy of its build per performance change
 * with that change undone (`bench/changes.ts`, as `npm run bench:costs` builds them; those whose
 * name contains one of the words given, or every change measured in process), and the whole
 * service again (its two runs show the spread between processes of one build: on a loaded
 * machine it can exceed any one change's difference, docs/performance.md). It prints, per
 * change, the copy's main-thread instructions per request against the whole service's (the mean
 * of its two runs) and the difference: what the change saves, as a share of what it costs
 * without it.
 *
 * Each dump (`callgrind_annotate`, with `--perf-basic-prof`'s `/tmp/perf-PID.map` to name V8's
 * code) is kept in a directory it names. Takes about three minutes a server; needs `valgrind`.
 */
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  makeRootDir,
  pgCtl,
  removeRootDir,
  SCRAM_LOGIN,
  startCluster,
} from '../test/setup/clusters';
import { AppProcess } from '../test/support/app-process';
import { bearerFromKeysTool } from '../test/support/auth';
import { runBounded } from '../test/support/bounded-run';
import { createMigratedDatabase } from '../test/support/migrated-database';
import { hasSystemBinary } from '../test/support/system-binary';
import { buildWithout, CHANGES, ROOT } from './changes';
import { growOrders } from './orders';

/**
 * Per scenario, requests served before counting, and counted. Under valgrind V8 still compiles
 * the service's code 12,000 cancels in; a list of 100 runs about eight times a cancel's
 * instructions, and the service's count per list stops falling after about 3,000.
 */
const COUNTS = {
  cancel: { warmup: 20_000, measured: 5_000 },
  list: { warmup: 3_000, measured: 2_000 },
} as const;
const CONNECTIONS = 10;
/** Whatever happens, the run ends by then: per server run under valgrind. */
const HARD_LIMIT_PER_SERVER_MS = 10 * 60_000;
/** What the hard limit must still stop (synchronously) if the run is stuck. */
const emergencyStops: (() => void)[] = [];

const SCENARIOS = {
  cancel: { method: 'DELETE', path: '/v1/store/orders/2', status: 204 },
  list: { method: 'GET', path: '/v1/store/orders', status: 200 },
} as const;

type ScenarioName = keyof typeof SCENARIOS;

const SERVERS: Record<string, string[]> = {
  service: ['dist/main.js'],
  bare: ['--require', '@swc-node/register', 'bench/reference/bare-nest.ts'],
};

/**
 * Timeouts no server under valgrind meets on a loaded machine (where it can stall for seconds):
 * a timed-out connection or request would end the run.
 */
const PATIENT = {
  DATABASE_CONNECT_TIMEOUT_MS: '120000',
  HTTP_HEADERS_TIMEOUT_MS: '300000',
  HTTP_REQUEST_TIMEOUT_MS: '300000',
  HTTP_KEEP_ALIVE_TIMEOUT_MS: '300000',
  HTTP_STALL_TIMEOUT_MS: '300000',
};

/** One server to count: its node arguments, run in `cwd` (the repository, or a copy of its build). */
interface Server {
  name: string;
  args: readonly string[];
  cwd: string;
}

/** What the command line asks for. */
interface Run {
  scenario: ScenarioName;
  servers: Server[];
  /** With `--costs`: the changes whose undone copies are counted against the whole service. */
  changes?: typeof CHANGES;
}

/** The whole service's second run, with `--costs`. */
const AGAIN = 'service again';

function parseRun(argv: readonly string[], root: string): Run {
  const [scenarioArg = 'cancel', ...rest] = argv;
  if (!(scenarioArg in SCENARIOS)) throw new Error(`unknown scenario ${scenarioArg}`);
  const scenario = scenarioArg as ScenarioName;
  if (rest[0] !== '--costs') {
    const names = rest.length > 0 ? rest : Object.keys(SERVERS);
    return {
      scenario,
      servers: names.map((name) => {
        const args = SERVERS[name] as string[] | undefined;
        if (!args) throw new Error(`unknown server ${name}`);
        return { name, args, cwd: ROOT };
      }),
    };
  }
  const words = rest.slice(1).map((word) => word.toLowerCase());
  // The Redis changes need a redis-server and the limits in it: `npm run bench:costs` times them.
  const changes = CHANGES.filter(
    (change) =>
      !change.redis &&
      (words.length === 0 || words.some((word) => change.name.toLowerCase().includes(word))),
  );
  if (changes.length === 0) throw new Error(`no change's name contains ${words.join(', ')}`);
  // A copy too, so that a build made while this runs (minutes) changes neither of its runs.
  const whole = {
    args: SERVERS.service,
    cwd: buildWithout({ name: 'whole', undo: [] }, root, 'none'),
  };
  return {
    scenario,
    changes,
    servers: [
      { name: 'service', ...whole },
      ...changes.map((change, i) => ({
        name: change.name,
        args: SERVERS.service,
        cwd: buildWithout(change, root, i),
      })),
      { name: AGAIN, ...whole },
    ],
  };
}

/** The `--costs` table: per change, the undone copy against the whole service (two runs' mean). */
function costsTable(
  scenario: ScenarioName,
  changes: typeof CHANGES,
  counted: Map<string, { main: number; all: number }>,
): string {
  const perRequest = (name: string): number =>
    (counted.get(name)?.main ?? NaN) / COUNTS[scenario].measured;
  const k = (instructions: number): string => `${(instructions / 1000).toFixed(1)}k`;
  const runs = [perRequest('service'), perRequest(AGAIN)];
  const whole = (runs[0] + runs[1]) / 2;
  const rows = changes.map((change) => {
    const undone = perRequest(change.name);
    const saved = ((undone / whole - 1) * 100).toFixed(1);
    return `| ${change.name} | ${k(undone)} → ${k(whole)} | ${saved} % |`;
  });
  return [
    `whole service, ${scenario}: ${runs.map(k).join(' and ')} main-thread instructions per request (two processes)`,
    '',
    `| undone (before) | ${scenario}: main thread per request, before → now | saved |`,
    '|---|--:|--:|',
    ...rows,
  ].join('\n');
}

/** `count` requests of `scenario`, `CONNECTIONS` at a time on keep-alive connections. */
async function drive(
  url: string,
  headers: Record<string, string>,
  scenario: ScenarioName,
  count: number,
): Promise<void> {
  const { method, path, status } = SCENARIOS[scenario];
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const once = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = request(`${url}${path}`, { method, headers, agent }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === status
            ? resolve()
            : reject(new Error(`${method} ${path}: ${String(res.statusCode)}`)),
        );
      });
      req.on('error', reject);
      req.end();
    });
  let sent = 0;
  const connection = async (): Promise<void> => {
    while (sent < count) {
      sent++;
      await once();
    }
  };
  try {
    await Promise.all(Array.from({ length: CONNECTIONS }, connection));
  } finally {
    agent.destroy();
  }
}

/** Instructions counted in the dump of each thread of `pid`: the main thread's, and all. */
function countedInstructions(dir: string, pid: number): { main: number; all: number } {
  let main = 0;
  let all = 0;
  for (const file of readdirSync(dir)) {
    const thread = new RegExp(`^callgrind\\.${pid}\\.1-(\\d+)$`).exec(file)?.[1];
    if (thread === undefined) continue;
    const total = /^totals: (\d+)/m.exec(readFileSync(join(dir, file), 'utf8'))?.[1];
    all += Number(total ?? 0);
    if (Number(thread) === 1) main += Number(total ?? 0);
  }
  return { main, all };
}

const root = makeRootDir();
const run = ((): Run => {
  try {
    return parseRun(process.argv.slice(2), root);
  } catch (error) {
    removeRootDir(root);
    throw error;
  }
})();

async function main(): Promise<boolean> {
  const { scenario, servers } = run;
  if (!hasSystemBinary('valgrind', 'valgrind', 'bench:instructions')) return true;

  const dumps = mkdtempSync(join(tmpdir(), 'instructions-'));
  const port = await freePort();
  const dataDir = join(root, 'postgres');
  emergencyStops.push(
    () => pgCtl(dataDir, ['-m', 'immediate', 'stop']),
    () => removeRootDir(root),
  );
  const pg = await startCluster(dataDir, port, SCRAM_LOGIN);
  const counted = new Map<string, { main: number; all: number }>();
  try {
    const databaseUrl = await createMigratedDatabase(port, 'instructions');
    await growOrders(databaseUrl, 100);
    const headers = await bearerFromKeysTool(databaseUrl, 'instructions');
    for (const { name: server, args, cwd } of servers) {
      process.stdout.write(`${server}: starting under valgrind\n`);
      const { app, url } = await AppProcess.start(
        [
          'valgrind',
          '--tool=callgrind',
          '--instr-atstart=no',
          '--separate-threads=yes',
          `--callgrind-out-file=${dumps}/callgrind.%p`,
          process.execPath,
          '--perf-basic-prof',
          ...args,
        ],
        { DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', ...PATIENT },
        cwd,
      );
      app.discardOutput();
      emergencyStops.unshift(() => app.kill('SIGKILL'));
      try {
        await drive(url, headers, scenario, COUNTS[scenario].warmup);
        // valgrind runs node in its own process: the pid is node's.
        const pid = String(app.pid);
        execFileSync('callgrind_control', ['--zero', pid], { stdio: 'ignore' });
        execFileSync('callgrind_control', ['--instr=on', pid], { stdio: 'ignore' });
        await drive(url, headers, scenario, COUNTS[scenario].measured);
        execFileSync('callgrind_control', ['--instr=off', pid], { stdio: 'ignore' });
        execFileSync('callgrind_control', ['--dump', pid], { stdio: 'ignore' });
        const { main: m, all } = countedInstructions(dumps, app.pid);
        counted.set(server, { main: m, all });
        process.stdout.write(
          `${server}, ${scenario}: ${(m / COUNTS[scenario].measured / 1000).toFixed(1)}k instructions per ` +
            `request on the main thread, ${(all / COUNTS[scenario].measured / 1000).toFixed(1)}k in all ` +
            `threads (pid ${pid})\n`,
        );
      } finally {
        await app.stop();
      }
    }
    const service = counted.get('service');
    const bare = counted.get('bare');
    if (service && bare) {
      process.stdout.write(
        `bare NestJS ÷ service: ${(bare.main / service.main).toFixed(3)} on the main thread, ` +
          `${(bare.all / service.all).toFixed(3)} in all threads\n`,
      );
    }
    if (run.changes) process.stdout.write(`\n${costsTable(scenario, run.changes, counted)}\n\n`);
    process.stdout.write(`dumps: ${dumps}\n`);
    return true;
  } finally {
    await pg.stop().catch(() => undefined);
    removeRootDir(root);
  }
}

runBounded(
  'bench:instructions',
  main,
  run.servers.length * HARD_LIMIT_PER_SERVER_MS,
  emergencyStops,
);
