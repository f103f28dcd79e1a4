/**
 * `npm run soak -- --minutes N` (default 30): the compose stack (test/stack/stack.ts, images built
 * as needed) under a mixed load through nginx at about 70 % of the capacity measured first, for N
 * minutes. Reported per 5 minutes: requests, p50/p99 latency, errors, and each instance's resident
 * memory. The mix: v1 lists (10,001 orders, streamed), v2 pages, cancels of random orders (204 or
 * 409), 404s, beside a free-plan client sending twice its limit (its 429s are intended).
 *
 * Exit 1 on any error (an answer outside 200/204/404/409, a failed connection, a client timeout),
 * or for runs of 10 minutes or more, on RSS growth of 20 MB or more after the first 5 minutes, or
 * on a p99 more than 20 % above the first bucket's; on errors it prints what answered them (nginx's
 * access log and the instances' own lines). Every container is removed at the end.
 */
import 'reflect-metadata';
import autocannon from 'autocannon';
import { runBounded } from '../test/support/bounded-run';
import { RECONNECT_RATE } from '../test/stack/load';
import { buildImages, INSTANCES, LB, log, Stack } from '../test/stack/stack';

const minutesArg = process.argv.indexOf('--minutes');
const MINUTES = minutesArg >= 0 ? Number(process.argv[minutesArg + 1]) : 30;
const BUCKET_MINUTES = 5;
const ORDERS = 10_001;
const CONNECTIONS = 16;
const LOAD_SHARE = 0.7;
const INTENDED = new Set(['200', '204', '404', '409']);

if (!Number.isFinite(MINUTES) || MINUTES <= 0) {
  process.stderr.write('usage: npm run soak -- --minutes N\n');
  process.exit(2);
}

interface Bucket {
  minutes: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  statuses: Record<string, number>;
  limited: number;
  rssMb: (number | undefined)[];
}

const stack = new Stack();

/** The mix, cycled by each connection; cancels and 404s pick their order id per request. */
function mix(): autocannon.Request[] {
  const randomOrder = (request: autocannon.Request): autocannon.Request => ({
    ...request,
    path: `/v1/store/orders/${1 + Math.floor(Math.random() * ORDERS)}`,
  });
  return [
    { method: 'GET', path: '/v2/store/orders?limit=50&status=pending' },
    { method: 'GET', path: '/v2/store/orders?limit=100&sort=-shipDate' },
    { method: 'DELETE', path: '/v1/store/orders/1', setupRequest: randomOrder },
    { method: 'GET', path: '/v2/store/orders?limit=20&petId=42' },
    { method: 'DELETE', path: '/v1/store/orders/999999999' },
    { method: 'GET', path: '/v1/store/orders' },
  ];
}

function run(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error: Error | null, result: autocannon.Result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

function statusesOf(result: autocannon.Result): Record<string, number> {
  return Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]),
  );
}

const mb = (bytes: number | undefined): string =>
  bytes === undefined ? '-' : (bytes / 1024 / 1024).toFixed(1);

async function main(): Promise<boolean> {
  await buildImages();
  const { load } = await stack.start(ORDERS);
  const free = await stack.issueKey('free');
  const base = {
    url: LB,
    headers: load,
    connections: CONNECTIONS,
    requests: mix(),
    timeout: 10,
    reconnectRate: RECONNECT_RATE,
  };

  log('measuring capacity: 20 s of the mix as fast as it is answered');
  const capacity = await run({ ...base, duration: 20 });
  const rate = Math.max(1, Math.round((capacity.requests.average || 1) * LOAD_SHARE));
  log(
    `capacity ${capacity.requests.average.toFixed(0)} requests/s (p50 ${capacity.latency.p50} ms, ` +
      `p99 ${capacity.latency.p99} ms); soak at ${rate}/s for ${MINUTES} min`,
  );

  const buckets: Bucket[] = [];
  for (let done = 0; done < MINUTES; done += BUCKET_MINUTES) {
    const minutes = Math.min(BUCKET_MINUTES, MINUTES - done);
    const duration = Math.round(minutes * 60);
    const [main, limited] = await Promise.all([
      run({ ...base, overallRate: rate, duration }),
      // Twice the free plan's 60 a minute: half of it is refused (then banned), as intended.
      run({
        url: `${LB}/v2/store/orders?limit=1`,
        headers: free,
        connections: 1,
        overallRate: 2,
        duration,
      }),
    ]);
    const statuses = statusesOf(main);
    const unintended = Object.entries(statuses)
      .filter(([code]) => !INTENDED.has(code))
      .reduce((sum, [, n]) => sum + n, 0);
    const limitedStatuses = statusesOf(limited);
    const limitedErrors = Object.entries(limitedStatuses)
      .filter(([code]) => code !== '200' && code !== '429')
      .reduce((sum, [, n]) => sum + n, 0);
    const bucket: Bucket = {
      minutes: done + minutes,
      requests: main.requests.total,
      rps: main.requests.average,
      p50: main.latency.p50,
      p99: main.latency.p99,
      errors: main.errors + unintended + limited.errors + limitedErrors,
      statuses,
      limited: limitedStatuses['429'] ?? 0,
      rssMb: await Promise.all(INSTANCES.map((name) => stack.rss(name))),
    };
    buckets.push(bucket);
    log(
      `minutes ${done}-${bucket.minutes}: ${bucket.requests} requests (${bucket.rps.toFixed(0)}/s), ` +
        `p50 ${bucket.p50} ms, p99 ${bucket.p99} ms, errors ${bucket.errors}, ` +
        `statuses ${JSON.stringify(statuses)}, intended 429s ${bucket.limited}, ` +
        `RSS app1 ${mb(bucket.rssMb[0])} MB, app2 ${mb(bucket.rssMb[1])} MB`,
    );
  }

  process.stdout.write(
    '\n| minutes | requests | req/s | p50 ms | p99 ms | errors | intended 429s | RSS app1 MB | RSS app2 MB |\n' +
      '|---|---|---|---|---|---|---|---|---|\n' +
      buckets
        .map(
          (b, i) =>
            `| ${i * BUCKET_MINUTES}–${b.minutes} | ${b.requests} | ${b.rps.toFixed(0)} | ${b.p50} | ${b.p99} | ${b.errors} | ${b.limited} | ${mb(b.rssMb[0])} | ${mb(b.rssMb[1])} |`,
        )
        .join('\n') +
      '\n\n',
  );

  let ok = buckets.every((b) => b.errors === 0);
  if (!ok) {
    log('FAIL: errors other than the intended 429s');
    process.stdout.write(await diagnosis());
  }
  if (MINUTES >= 10 && buckets.length >= 2) {
    const [first, ...rest] = buckets;
    for (const [i, name] of INSTANCES.entries()) {
      const growth = Math.max(...rest.map((b) => b.rssMb[i] ?? 0)) - (first.rssMb[i] ?? 0);
      const held = growth < 20 * 1024 * 1024;
      log(
        `${name}: RSS growth after the first ${BUCKET_MINUTES} min ${mb(growth)} MB (< 20 MB: ${held})`,
      );
      ok &&= held;
    }
    const worst = Math.max(...rest.map((b) => b.p99));
    const steady = worst <= first.p99 * 1.2;
    log(`p99: first bucket ${first.p99} ms, worst later ${worst} ms (within 20 %: ${steady})`);
    ok &&= steady;
  }
  return ok;
}

/** A JSON log line, or nothing for a line that is not one. */
function parsed(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What answered the unintended statuses: nginx's access log gives each one's status, upstream
 * and request id; the instances' own lines for those request ids give the route and message;
 * and every line the instances logged at warn or above, counted by message (with the first's
 * route and fields), says why.
 */
async function diagnosis(): Promise<string> {
  const out: string[] = ['', "Unintended answers, from nginx's access log:"];
  const ids = new Set<string>();
  const answers = new Map<string, number>();
  for (const entry of (await stack.logs('lb')).split('\n').map(parsed)) {
    if (!entry || typeof entry.status !== 'number') continue;
    const status = String(entry.status);
    if (INTENDED.has(status) || status === '429') continue;
    if (typeof entry.request_id === 'string' && entry.request_id) ids.add(entry.request_id);
    const what = `${entry.method as string} ${status} upstream ${entry.upstream as string} (${entry.upstream_status as string})`;
    answers.set(what, (answers.get(what) ?? 0) + 1);
  }
  for (const [what, n] of answers) out.push(`  ${n} × ${what}`);
  for (const name of INSTANCES) {
    const warnings = new Map<string, { n: number; first: Record<string, unknown> }>();
    for (const entry of (await stack.logs(name)).split('\n').map(parsed)) {
      if (!entry) continue;
      const req = entry.req as { id?: string } | undefined;
      if (req?.id !== undefined && ids.has(req.id)) {
        out.push(`  ${name}: request ${req.id}: ${JSON.stringify(entry)}`);
      }
      if (typeof entry.level === 'number' && entry.level >= 40) {
        const msg = String(entry.msg);
        const seen = warnings.get(msg);
        if (seen) seen.n++;
        else warnings.set(msg, { n: 1, first: entry });
      }
    }
    out.push(`${name}: lines at warn or above, by message:`);
    for (const [msg, { n, first }] of warnings) {
      out.push(`  ${n} × ${msg}; first: ${JSON.stringify(first).slice(0, 600)}`);
    }
  }
  return `${out.join('\n')}\n\n`;
}

const cleanup = (): void => {
  void Stack.removeAll();
};
process.once('SIGINT', () => {
  void Stack.removeAll().finally(() => process.exit(130));
});
runBounded(
  'soak',
  () =>
    main().finally(async () => {
      await stack.stop();
    }),
  (MINUTES + 20) * 60_000,
  [cleanup],
);
