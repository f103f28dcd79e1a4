/**
 * `npm run test:stack`: the production stack run for real (docs/deploying.md, "The stack test").
 * Builds the images as needed, starts PostgreSQL, Redis, the migration, two
 * instances, nginx and Prometheus from the repository's files (test/stack/stack.ts), then checks,
 * through nginx as clients see it: one limit per key across both instances, the anonymous limit on
 * the real client address, an overload at three times the sustained rate answered with the
 * instances' own 503s and Retry-After (no 502 or 504 of nginx's), and its recovery with
 * STACK_OVERLOAD_RECOVERY=1, zero failed requests across a `docker stop` and a rolling restart under
 * load, a `docker kill` costing only requests in flight, a Redis outage answered as documented,
 * Prometheus scraping both instances and firing its alert for the killed one, the
 * 1,000,000-order list streaming from its first byte within a second, webhooks made by the
 * worker: a cancel reaching a receiver here, the worker killed mid-delivery and a second one
 * finishing, and the worker stopped under a load of cancels, none failing and none of their
 * events lost; and the next release (test/stack/next-release.ts) rolled out, back and forward
 * under a mixed load, then contracted, with zero failed requests and the rollout's p99 within
 * twice the steady one.
 * Figures are printed.
 * Every container is removed at the end, failed or not.
 */
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { withClient } from '../setup/clusters';
import { httpRequest } from '../support/http';
import { verified, WebhookReceiver } from '../support/webhook-receiver';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { backfillOrderPriorities } from '../fixtures/order-priorities/order-priorities.backfill';
import {
  describeLoad,
  latencyBySteps,
  loadDuring,
  loadFor,
  type LoadOptions,
  type LoadResult,
  percentile,
  storeMix,
  type StoreMix,
} from './load';
import { buildNextReleases, CONTRACT_MIGRATION, EXPAND_MIGRATION } from './next-release';
import { goodputOf, p99Of, served as isServed } from '../support/open-loop';
import {
  codeOf,
  countBy,
  nginxLinesSince,
  OVERLOAD,
  type OverloadRun,
  overloadThrough,
  recoveredAfterMs,
  refusalShape,
  statusesOf,
} from './overload';
import {
  ADDRESS,
  APP_IMAGE,
  buildImages,
  docker,
  type Instance,
  INSTANCES,
  Keys,
  LB,
  log,
  PROMETHEUS,
  ROOT,
  sleep,
  Stack,
  until,
} from './stack';

const ORDERS = 1_000_000;
/** A light request of the API: one index range scan. */
const PAGE_PATH = '/v2/store/orders?limit=20&status=pending';
const PAGE = `${LB}${PAGE_PATH}`;

/** app2's admin listener: app1 is killed before the webhook checks run. */
const ADMIN_PORT = 3100;
const ADMIN = `http://${ADDRESS.app2}:${ADMIN_PORT}`;
/** The compose worker's WEBHOOK_CONCURRENCY (its default): its attempts in flight at most. */
const WORKER_CONCURRENCY = 10;

/**
 * The webhook receiver is in this process, on loopback, over http: settings the compose file
 * leaves off (they are for development and tests), given to this run's instances and worker.
 */
const stack = new Stack({
  env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
  adminPort: ADMIN_PORT,
});
let keys: Keys;
let killedAt = 0;
/** The overload through nginx, for the check of its recovery. */
let overloadRun: OverloadRun | undefined;
/** When StoreOrdersInstanceDown was first seen firing for app1, watched from its kill on. */
let app1DownFiredAt: Promise<number> | undefined;

/** One GET on a fresh connection from `localAddress` (a loopback address of the client's). */
function getFrom(
  localAddress: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${LB}${path}`, { localAddress, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}

/** Each instance's sum of the samples of a counter, those whose labels `keep`, from its metrics. */
async function countedBy(counter: string, keep: (labels: string) => boolean): Promise<number[]> {
  return Promise.all(
    INSTANCES.map(async (name) => {
      const { body } = await httpRequest(`http://${ADDRESS[name]}:9464/metrics`);
      return body
        .split('\n')
        .filter((l) => l.startsWith(`${counter}{`) && keep(l.slice(counter.length)))
        .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    }),
  );
}

/** Each instance's count of requests refused as overloaded. */
const shedBy = (): Promise<number[]> => countedBy('http_requests_shed_total', () => true);

/** Each instance's count of 200s on the v2 list. */
const servedBy = (): Promise<number[]> =>
  countedBy(
    'http_requests_total',
    (l) => l.includes('route="/v2/store/orders"') && l.includes('status="200"'),
  );

async function prometheus<T>(path: string): Promise<T> {
  const res = await httpRequest(`${PROMETHEUS}${path}`, { timeoutMs: 5_000 });
  return (JSON.parse(res.body) as { data: T }).data;
}

type Sample = { metric: Record<string, string>; value: [number, string] };
type Alert = { labels: Record<string, string>; state: string };

const seconds = (d: string): number => Number.parseInt(d, 10) * (d.endsWith('m') ? 60 : 1);

/**
 * StoreOrdersInstanceDown's `for`, and the latest it may fire after an instance goes down: after
 * the failed scrape that sees it down and the evaluation that follows.
 */
function instanceDownTimes(): { forMs: number; boundMs: number } {
  const rules = parse(readFileSync(join(ROOT, 'docker/prometheus/alerts.yml'), 'utf8')) as {
    groups: { rules: { alert: string; for?: string }[] }[];
  };
  const config = parse(readFileSync(join(ROOT, 'docker/prometheus/prometheus.yml'), 'utf8')) as {
    global: { scrape_interval: string; evaluation_interval: string };
  };
  const rule = rules.groups
    .flatMap((g) => g.rules)
    .find((r) => r.alert === 'StoreOrdersInstanceDown');
  const forMs = seconds(rule?.for ?? '0s') * 1000;
  const boundMs =
    forMs +
    (seconds(config.global.scrape_interval) + seconds(config.global.evaluation_interval)) * 1000;
  return { forMs, boundMs };
}
const ALERT_SLACK_MS = 30_000;

async function firingInstances(alertname: string): Promise<string[]> {
  const { alerts } = await prometheus<{ alerts: Alert[] }>('/api/v1/alerts');
  return alerts
    .filter((a) => a.labels.alertname === alertname && a.state === 'firing')
    .map((a) => a.labels.instance);
}

beforeAll(async () => {
  const started = Date.now();
  await buildImages();
  log(`images ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const up = Date.now();
  keys = await stack.start(ORDERS);
  log(`stack up with ${ORDERS} orders in ${((Date.now() - up) / 1000).toFixed(0)} s`);
}, 900_000);

afterAll(async () => {
  await stack.stop();
});

it('Prometheus scrapes both instances (up == 1) and has loaded every alert rule', async () => {
  const waited = await until('up == 1 for app1 and app2', 90_000, async () => {
    const up = await prometheus<{ result: Sample[] }>('/api/v1/query?query=up').catch(() => ({
      result: [] as Sample[],
    }));
    const ones = up.result.filter((s) => s.value[1] === '1').map((s) => s.metric.instance);
    return ones.includes('app1:9464') && ones.includes('app2:9464');
  });
  const rules = parse(readFileSync(join(ROOT, 'docker/prometheus/alerts.yml'), 'utf8')) as {
    groups: { rules: { alert: string }[] }[];
  };
  const loaded = await prometheus<{ groups: { rules: { name: string }[] }[] }>('/api/v1/rules');
  expect(loaded.groups.flatMap((g) => g.rules.map((r) => r.name)).sort()).toEqual(
    rules.groups.flatMap((g) => g.rules.map((r) => r.alert)).sort(),
  );
  log(`prometheus: up == 1 for app1:9464 and app2:9464 after ${waited} ms; rules loaded`);
}, 120_000);

it('enforces one limit per key across both instances: a free key gets exactly 60, then 429', async () => {
  const free = await stack.issueKey('free');
  const before = await servedBy();
  const statuses: number[] = [];
  for (let i = 0; i < 70; i++)
    statuses.push(await getFrom('127.0.0.1', '/v2/store/orders?limit=1', free));
  const after = await servedBy();
  const served = after.map((n, i) => n - before[i]);
  log(
    `free key: 70 requests through nginx: ${statuses.filter((s) => s === 200).length} × 200, ` +
      `${statuses.filter((s) => s === 429).length} × 429; 200s served by app1 ${served[0]}, app2 ${served[1]}`,
  );
  expect(statuses).toEqual([...Array<number>(60).fill(200), ...Array<number>(10).fill(429)]);
  // Both instances answered: the limit is one across them, not one each.
  expect(served[0]).toBeGreaterThan(0);
  expect(served[1]).toBeGreaterThan(0);
  expect(served[0] + served[1]).toBe(60);
});

it('limits anonymous clients by their real address: their own X-Forwarded-For cannot move it', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 70; i++) {
    // A new made-up address on every request: were it believed, no limit would ever bind.
    statuses.push(
      await getFrom('127.0.0.2', '/v1/store/orders', { 'X-Forwarded-For': `203.0.113.${i + 1}` }),
    );
  }
  const other = await getFrom('127.0.0.3', '/v1/store/orders');
  log(
    `anonymous from 127.0.0.2 with forged X-Forwarded-For: ${statuses.filter((s) => s === 401).length} × 401, ` +
      `${statuses.filter((s) => s === 429).length} × 429; then 127.0.0.3: ${other}`,
  );
  expect(statuses).toEqual([...Array<number>(60).fill(401), ...Array<number>(10).fill(429)]);
  expect(other).toBe(401);
});

it('an overload through nginx at 3× the sustained rate: no 502 or 504, the instances’ 503s passed on with Retry-After and never retried, pages still served', async () => {
  const from = new Date();
  const shedBefore = await shedBy();
  const run = await overloadThrough(
    { url: LB, headers: keys.load },
    { method: 'GET', path: PAGE_PATH },
  );
  const shed = (await shedBy()).map((n, i) => n - shedBefore[i]);
  const { overload, recovery } = run;
  const served = overload.answers.filter(isServed);
  const refused = overload.answers.filter((a) => a.status === 503);
  const other = [...overload.answers, ...recovery.answers].filter(
    (a) => !isServed(a) && a.status !== 503,
  );
  const recoveredMs = recoveredAfterMs(recovery);
  const retried = nginxLinesSince(await stack.logs('lb'), from).filter((l) =>
    l.upstream.includes(','),
  );
  log(
    `overload through nginx on ${PAGE_PATH}: sustained ${run.sustained.rate.toFixed(0)}/s ` +
      `(closed loop, ${OVERLOAD.connections} connections, p99 ${run.sustained.p99Ms.toFixed(0)} ms, ` +
      `${JSON.stringify(run.sustained.statuses)}); offered ${run.offered.rate}/s open loop for ` +
      `${OVERLOAD.overloadMs / 1000} s (${run.offered.sent} sent): ${JSON.stringify(statusesOf(overload.answers))}, ` +
      `2xx ${goodputOf(overload).toFixed(0)}/s (p99 ${p99Of(served).toFixed(0)} ms), ` +
      `503 p99 ${p99Of(refused).toFixed(0)} ms (${JSON.stringify(countBy(refused.map(codeOf)))}), shed by app1 ${shed[0]}, app2 ${shed[1]}; ` +
      `nginx tried a second instance for ${retried.length} (${JSON.stringify(countBy(retried.map((l) => l.upstreamStatus)))}); ` +
      `then ${recovery.sent} at half the sustained rate: ${JSON.stringify(statusesOf(recovery.answers))}, ` +
      `every answer 2xx from ${recoveredMs} ms after the overload ` +
      `(p99 ${p99Of(recovery.answers.filter((a) => a.at >= recoveredMs)).toFixed(0)} ms)`,
  );
  // Neither nginx's 502 or 504, nor a connection reset, nor an answer lost.
  expect(statusesOf(other)).toEqual({});
  // An instance's refusal is never tried again on the other instance.
  expect(retried.filter((l) => /503,/.test(l.upstreamStatus))).toEqual([]);
  // Each 503 reached the client as an instance made it: its JSON error body and Retry-After.
  // Most are the door's refusals; an admitted page that overran its database budget on the
  // starved machine is the instance's SERVICE_UNAVAILABLE, with Retry-After too.
  const refusals = countBy(refused.map(refusalShape));
  const [overloaded, unavailable] = ['OVERLOADED', 'SERVICE_UNAVAILABLE'].map((code) =>
    JSON.stringify({
      status: 503,
      retryAfter: 'seconds',
      body: { fields: ['code', 'message', 'status'], code, status: 503, message: true },
    }),
  );
  expect(Object.keys(refusals).filter((shape) => shape !== unavailable)).toEqual([overloaded]);
  expect(refusals[overloaded]).toBeGreaterThan(0);
  // Pages still served, to the end of the overload.
  expect(served.length).toBeGreaterThan(0);
  expect(served.filter((a) => a.at >= (OVERLOAD.overloadMs * 2) / 3).length).toBeGreaterThan(0);
  overloadRun = run;
}, 90_000);

/**
 * Opt-in for now (STACK_OVERLOAD_RECOVERY=1): on the shared 2-core machine the instances still
 * refused some of a load at half the sustained rate 8 s to over 12 s after the overload
 * (docs/deploying.md, "The stack test").
 */
const overloadRecovery = process.env.STACK_OVERLOAD_RECOVERY === '1' ? it : it.skip;

overloadRecovery('after the overload through nginx, every answer 2xx again within 10 s', () => {
  if (overloadRun === undefined) throw new Error('the overload did not run');
  // Before the recovery load's last 2 s, and from then on.
  expect(recoveredAfterMs(overloadRun.recovery)).toBeLessThanOrEqual(OVERLOAD.recoveryMs - 2_000);
});

/**
 * The stack as the overload left it, back to normal before the next check: 20 pages in a row
 * answered 200 through nginx, then each instance answering through nginx, so that an instance
 * nginx found too slow to connect to during the overload is back in its rotation. (How long the
 * overload's aftermath lasts is the overload check's figure, not this one's.)
 */
async function settledAfterOverload(): Promise<void> {
  await until('20 pages in a row answered 200 through nginx', 60_000, async () => {
    for (let i = 0; i < 20; i++) {
      const { status } = await httpRequest(PAGE, { headers: keys.load, timeoutMs: 2_000 }).catch(
        () => ({ status: 0 }),
      );
      if (status !== 200) return false;
    }
    return true;
  });
  for (const name of INSTANCES) await stack.waitServedThroughNginx(name);
}

it('`docker stop` of one instance under load through nginx: zero failed requests', async () => {
  await settledAfterOverload();
  let stopMs = 0;
  const result = await loadDuring({ url: PAGE, headers: keys.load }, async () => {
    const t = Date.now();
    await docker('stop', stack.container('app1'));
    stopMs = Date.now() - t;
    await docker('start', stack.container('app1'));
    await stack.waitInRotation('app1');
  });
  log(`docker stop app1 (took ${stopMs} ms) and start, under load: ${describeLoad(result)}`);
  expect(result.requests).toBeGreaterThan(0);
  expect(result.failed).toBe(0);
}, 120_000);

it('a rolling restart of both instances, one at a time, under load: zero failed requests', async () => {
  const result = await loadDuring({ url: PAGE, headers: keys.load }, async () => {
    for (const name of INSTANCES) await stack.restart(name);
  });
  log(`rolling restart app1 then app2, under load: ${describeLoad(result)}`);
  expect(result.requests).toBeGreaterThan(0);
  expect(result.failed).toBe(0);
}, 180_000);

it('`docker kill` of one instance: nginx moves to the other, only requests in flight fail', async () => {
  const connections = 8;
  const result = await loadDuring(
    { url: PAGE, headers: keys.load, connections },
    async () => {
      await docker('kill', stack.container('app1'));
      killedAt = Date.now();
      // Watched from now on, while the checks that follow run (they take the alert's `for`).
      const { boundMs } = instanceDownTimes();
      app1DownFiredAt = until(
        'StoreOrdersInstanceDown firing for app1',
        boundMs + ALERT_SLACK_MS,
        async () => (await firingInstances('StoreOrdersInstanceDown')).includes('app1:9464'),
      ).then(() => Date.now());
      // Awaited by the alert's check; until then a failure is its to report.
      app1DownFiredAt.catch(() => undefined);
    },
    5_000,
  );
  log(
    `docker kill app1 under load (${connections} connections): failed ${result.failed} ` +
      `(at most the ${connections} in flight); ${describeLoad(result)}`,
  );
  expect(result.requests).toBeGreaterThan(0);
  expect(result.failed).toBeLessThanOrEqual(connections);
  expect(result.timeouts).toBe(0);
}, 60_000);

it('Redis stopped and started under load: limits fall back per instance, no request fails or hangs', async () => {
  const logsBefore = (await stack.logs('app2')).length;
  const result = await loadDuring({ url: PAGE, headers: keys.load, timeoutSec: 10 }, async () => {
    await docker('stop', stack.container('redis'));
    await sleep(5_000);
    await docker('start', stack.container('redis'));
    await stack.waitReady('app2');
  });
  const logs = (await stack.logs('app2')).slice(logsBefore);
  log(`redis stop, 5 s, start, under load: ${describeLoad(result)}`);
  // docs/operating.md: fail open to per-instance counters, one warning per outage, no waiting.
  expect(logs).toContain('Redis unreachable: rate limits fall back to per-instance counters');
  expect(result.failed).toBe(0);
  expect(result.timeouts).toBe(0);
  expect(result.max).toBeLessThan(5_000);
}, 90_000);

it('streams the 1,000,000-order list through nginx, its first byte within a second', async () => {
  const { firstByteMs, totalMs, bytes, orders, last } = await new Promise<{
    firstByteMs: number;
    totalMs: number;
    bytes: number;
    orders: number;
    last: string;
  }>((resolve, reject) => {
    const started = performance.now();
    let firstByteMs = -1;
    let bytes = 0;
    let orders = 0;
    let last = '';
    const req = request(`${LB}/v1/store/orders`, { headers: keys.load, agent: false }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
      res.on('data', (chunk: Buffer) => {
        if (firstByteMs < 0) firstByteMs = performance.now() - started;
        bytes += chunk.length;
        // One `{` per order: no field of an order holds one.
        for (let i = chunk.indexOf(0x7b); i >= 0; i = chunk.indexOf(0x7b, i + 1)) orders++;
        last = chunk.subarray(-1).toString();
      });
      res.on('error', reject);
      res.on('end', () =>
        resolve({ firstByteMs, totalMs: performance.now() - started, bytes, orders, last }),
      );
    });
    req.setTimeout(120_000, () => req.destroy(new Error('list not whole within 120 s')));
    req.on('error', reject);
    req.end();
  });
  log(
    `1,000,000-order list through nginx: first byte ${firstByteMs.toFixed(0)} ms, ` +
      `${(bytes / 1e6).toFixed(1)} MB whole in ${(totalMs / 1000).toFixed(1)} s`,
  );
  expect(firstByteMs).toBeLessThan(1_000);
  expect(orders).toBe(ORDERS);
  expect(last).toBe(']');
}, 150_000);

describe('webhooks, made by the worker', () => {
  const receiver = new WebhookReceiver();
  let endpoint: { id: string; secret: string };
  /** Pending orders, the newest first, each cancelled once by the checks below. */
  let pending: string[] = [];

  /** A cancel of a pending order through nginx, as a client makes it. */
  async function cancel(orderId: string): Promise<void> {
    const res = await httpRequest(`${LB}/v1/store/orders/${orderId}`, {
      method: 'DELETE',
      headers: keys.load,
    });
    expect(res.status).toBe(204);
  }

  /** The `webhook-id`s of the order.cancelled events committed with ids above `after`. */
  async function cancelledEvents(after: string): Promise<string[]> {
    const { rows } = await withClient(keys.databaseUrl, (c) =>
      c.query<{ id: string }>(
        `SELECT id FROM audit_events WHERE action = 'order.cancelled' AND id > $1 ORDER BY id`,
        [after],
      ),
    );
    return rows.map((r) => `evt_${r.id}`);
  }

  async function lastEventId(): Promise<string> {
    const { rows } = await withClient(keys.databaseUrl, (c) =>
      c.query<{ id: string }>('SELECT COALESCE(max(id), 0)::text AS id FROM audit_events'),
    );
    return rows[0].id;
  }

  /** The endpoint's deliveries of these events (in `status`, else any), in the database. */
  async function deliveriesOf(webhookIds: string[], status?: string): Promise<number> {
    const { rows } = await withClient(keys.databaseUrl, (c) =>
      c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries
          WHERE endpoint_id = $1 AND webhook_id = ANY ($2) AND ($3::text IS NULL OR status = $3)`,
        [endpoint.id, webhookIds, status ?? null],
      ),
    );
    return rows[0].n;
  }

  /** The worker's count of delivered attempts, from its own metrics (0 for a new process). */
  async function workerDelivered(): Promise<number> {
    const { body } = await httpRequest(`http://${ADDRESS.worker}:9464/metrics`);
    const line = body
      .split('\n')
      .find((l) => l.startsWith('webhook_deliveries_total{result="delivered"}'));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  }

  /** Those of `webhookIds` the receiver got at least once. */
  function arrived(webhookIds: string[]): string[] {
    const got = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    return webhookIds.filter((id) => got.has(id));
  }

  beforeAll(async () => {
    await receiver.start();
    const admin = await stack.issueKey('enterprise', ['webhooks:admin']);
    const res = await httpRequest(`${ADMIN}/admin/v1/webhooks`, {
      method: 'POST',
      headers: { ...admin, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['order.cancelled'] }),
    });
    expect(res.status).toBe(201);
    endpoint = JSON.parse(res.body) as { id: string; secret: string };
    const { rows } = await withClient(keys.databaseUrl, (c) =>
      c.query<{ id: string }>(
        `SELECT id FROM orders WHERE status = 'pending' ORDER BY id DESC LIMIT 10000`,
      ),
    );
    pending = rows.map((r) => r.id);
  });

  afterAll(async () => {
    await receiver.stop();
  });

  it('a cancel through nginx reaches a receiver on loopback, signed, made by the worker', async () => {
    const delivered = await workerDelivered();
    const orderId = pending.shift() ?? '';
    const base = await lastEventId();
    const started = Date.now();
    await cancel(orderId);
    const [webhookId] = await cancelledEvents(base);
    await until(`${webhookId} at the receiver`, 30_000, () =>
      Promise.resolve(receiver.of(webhookId).length > 0),
    );
    const message = verified(endpoint.secret, receiver.of(webhookId)[0]);
    expect(message.type).toBe('order.cancelled');
    expect(message.data.object).toMatchObject({ id: Number(orderId), status: 'cancelled' });
    // The worker made the attempt (the instances run SERVICE_ROLES=api).
    await until('the worker counts it delivered', 10_000, async () => {
      return (await workerDelivered()) === delivered + 1;
    });
    log(
      `cancel of order ${orderId} through nginx: ${webhookId} at the receiver ` +
        `${receiver.of(webhookId)[0].at - started} ms after the request (signature verified)`,
    );
  }, 60_000);

  it('the worker killed mid-delivery: a second worker finishes every delivery', async () => {
    // A slow receiver: the worker's attempts are in flight when it dies.
    receiver.answer = () => ({ status: 200, delayMs: 1_000 });
    const orders = pending.splice(0, 60);
    const base = await lastEventId();
    for (const orderId of orders) await cancel(orderId);
    const events = await cancelledEvents(base);
    expect(events).toHaveLength(orders.length);
    // Every event fanned out into its delivery, so the kill cuts attempts.
    await until('a delivery per event', 30_000, async () => {
      return (await deliveriesOf(events)) === events.length;
    });
    await until('attempts under way', 30_000, () =>
      Promise.resolve(arrived(events).length >= 15 && receiver.inFlight > 0),
    );
    // The receiver's answers still leave on time after the kill: attempts under way counted first.
    const unanswered = receiver.inFlight;
    await docker('kill', stack.container('worker'));
    const atKill = { arrived: arrived(events).length, unanswered };
    const killed = Date.now();
    // The compose service again, in a container of its own, on the worker's address.
    await stack.startInstance('worker', { container: 'worker-2' });
    const upMs = await stack.waitWorkerUp();
    await until('every event at the receiver', 120_000, () =>
      Promise.resolve(arrived(events).length === events.length),
    );
    const finishedMs = Date.now() - killed;
    await until('every delivery recorded delivered', 30_000, async () => {
      return (await deliveriesOf(events, 'delivered')) === events.length;
    });
    const deliveredMs = Date.now() - killed;
    const duplicates = events.reduce((n, id) => n + receiver.of(id).length - 1, 0);
    log(
      `worker killed with ${atKill.arrived} of ${events.length} events at the receiver ` +
        `(${atKill.unanswered} attempts unanswered as the kill was sent); worker-2 up in ` +
        `${upMs} ms; every event there ${finishedMs} ms after the kill, every delivery ` +
        `delivered after ${deliveredMs} ms, worker-2 delivered ${await workerDelivered()}; ` +
        `duplicates ${duplicates}`,
    );
    expect(atKill.arrived).toBeLessThan(events.length);
    expect(atKill.unanswered).toBeGreaterThan(0);
    expect(await workerDelivered()).toBeGreaterThan(0);
    // The attempts the kill cut off are made again, and only they: at least one, and at most
    // those one worker runs at once.
    expect(duplicates).toBeGreaterThan(0);
    expect(duplicates).toBeLessThanOrEqual(WORKER_CONCURRENCY);
    for (const id of events) {
      for (const r of receiver.of(id))
        expect(verified(endpoint.secret, r).type).toBe('order.cancelled');
    }
  }, 180_000);

  it('the worker stopped: cancels through nginx answer under load, their events wait and are all delivered when it is back', async () => {
    receiver.answer = () => ({ status: 200 });
    const base = await lastEventId();
    let stoppedAt = '';
    let stopMs = 0;
    const result = await loadDuring(
      {
        url: LB,
        headers: keys.load,
        overallRate: 250,
        requests: [
          {
            method: 'DELETE',
            setupRequest: (req) => ({ ...req, path: `/v1/store/orders/${pending.shift() ?? 0}` }),
          },
        ],
      },
      async () => {
        const t = Date.now();
        await docker('stop', stack.container('worker-2'));
        stopMs = Date.now() - t;
        stoppedAt = await lastEventId();
        await sleep(3_000);
      },
    );
    const whileDown = await cancelledEvents(stoppedAt);
    const events = await cancelledEvents(base);
    log(
      `worker stopped (took ${stopMs} ms) under cancels through nginx: ${describeLoad(result)}; ${events.length} ` +
        `events, ${whileDown.length} of them while it was down`,
    );
    expect(pending.length).toBeGreaterThan(0);
    expect(result.requests).toBeGreaterThan(0);
    expect(result.failed).toBe(0);
    // One event per cancel answered (and maybe for those still in flight when the load stopped).
    expect(events.length).toBeGreaterThanOrEqual(result.requests);
    // They wait in the trail: none fanned out, none sent.
    expect(whileDown.length).toBeGreaterThan(0);
    expect(await deliveriesOf(whileDown)).toBe(0);
    expect(arrived(whileDown)).toEqual([]);
    const started = Date.now();
    await docker('start', stack.container('worker-2'));
    await until('every event at the receiver', 120_000, () =>
      Promise.resolve(arrived(events).length === events.length),
    );
    const duplicates = events.reduce((n, id) => n + receiver.of(id).length - 1, 0);
    log(
      `worker started again: all ${events.length} events at the receiver ` +
        `${Date.now() - started} ms after \`docker start\`; duplicates ${duplicates}`,
    );
    // A stop lets the attempts under way end: nothing is sent twice.
    expect(duplicates).toBe(0);
  }, 180_000);
});

it('fires StoreOrdersInstanceDown for the killed instance in the time its rule says', async () => {
  const { forMs, boundMs } = instanceDownTimes();
  if (app1DownFiredAt === undefined) throw new Error('app1 was not killed');
  const firedMs = (await app1DownFiredAt) - killedAt;
  log(
    `StoreOrdersInstanceDown firing for app1:9464 ${(firedMs / 1000).toFixed(0)} s after the kill ` +
      `(rule: for ${forMs / 1000} s; bound with scrape and evaluation intervals ${boundMs / 1000} s)`,
  );
  expect(firedMs).toBeGreaterThanOrEqual(forMs);
  expect(firedMs).toBeLessThanOrEqual(boundMs + ALERT_SLACK_MS);
  expect(await firingInstances('StoreOrdersInstanceDown')).toEqual(['app1:9464']);
}, 300_000);

describe('the next release rolled out under load, rolled back and forward, then contracted', () => {
  const NEXT = 'store-orders-service:next';
  const AFTER = 'store-orders-service:after-next';
  /** The load's rate: well under what one instance answers, so latency measures the rollout. */
  const RATE = 50;
  /**
   * Steady load is measured twice, before the rollout and after it, and the rollout's p99 is held
   * to that of both together: the machine's own ups and downs over the rollout's span, not those
   * of a single minute before it.
   */
  const STEADY_MS = 45_000;
  let mixOptions: (mix: StoreMix) => LoadOptions;
  let pending: string[][];
  let steady: LoadResult;
  let storeMixOf: (share: number) => StoreMix;

  /** The store_orders_build_info labels an instance reports. */
  async function buildInfo(name: Instance): Promise<{ version: string; schema: string }> {
    const { body } = await httpRequest(`http://${ADDRESS[name]}:9464/metrics`);
    const line = body.split('\n').find((l) => l.startsWith('store_orders_build_info{')) ?? '';
    return {
      version: /version="([^"]*)"/.exec(line)?.[1] ?? '',
      schema: /schema="([^"]*)"/.exec(line)?.[1] ?? '',
    };
  }

  /** The status an instance itself answers for an order's priority (the next release's route). */
  async function priorityStatus(name: Instance, orderId: string): Promise<number> {
    const res = await httpRequest(`http://${ADDRESS[name]}:3000/v1/order-priorities/${orderId}`, {
      headers: keys.load,
    });
    return res.status;
  }

  /** Each order cancelled by the mix is cancelled in the store, with its one audit event. */
  async function expectCancelsKept(cancelled: string[]): Promise<void> {
    expect(cancelled.length).toBeGreaterThan(0);
    const { stored, audited } = await withClient(stack.migrateUrl, async (c) => {
      const orders = await c.query<{ n: string }>(
        `SELECT count(*) AS n FROM orders WHERE id = ANY($1::int8[]) AND status = 'cancelled'`,
        [cancelled],
      );
      const events = await c.query<{ n: string }>(
        `SELECT count(*) AS n FROM audit_events
          WHERE action = 'order.cancelled' AND target = ANY($1::text[])`,
        [cancelled.map((id) => `order:${id}`)],
      );
      return { stored: Number(orders.rows[0].n), audited: Number(events.rows[0].n) };
    });
    expect({ stored, audited }).toEqual({ stored: cancelled.length, audited: cancelled.length });
  }

  beforeAll(async () => {
    const started = Date.now();
    await buildNextReleases({ next: NEXT, after: AFTER });
    log(`next releases built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    // The instance an earlier check killed, back in rotation.
    await docker('start', stack.container('app1'));
    await stack.waitInRotation('app1');
    // The worker an earlier check killed and replaced by `worker-2`: the worker's own container
    // again, the one the rollout replaces (both take the worker's address).
    const worker2 = await docker('ps', '-aq', '--filter', `name=^${stack.container('worker-2')}$`);
    if (worker2 !== '') {
      await docker('stop', stack.container('worker-2'));
      await docker('start', stack.container('worker'));
      await stack.waitWorkerUp();
    }

    const list = '/v2/store/orders?limit=20&status=pending';
    const first = await httpRequest(`${LB}${list}`, { headers: keys.load });
    const { nextCursor } = JSON.parse(first.body) as { nextCursor: string };
    const otherKey = await stack.issueKey('enterprise');
    const paths = { list, nextPage: `${list}&cursor=${encodeURIComponent(nextCursor)}` };
    mixOptions = (mix) => ({
      url: LB,
      headers: keys.load,
      requests: mix.requests,
      overallRate: RATE,
    });
    // Orders no one else cancels, newest first: one share for each load below.
    const ids = await withClient(stack.migrateUrl, (c) =>
      c.query<{ id: string }>(
        `SELECT id::text FROM orders WHERE status = 'pending' ORDER BY id DESC LIMIT 80000`,
      ),
    );
    pending = [0, 1, 2, 3].map((i) =>
      ids.rows.slice(i * 20_000, (i + 1) * 20_000).map((r) => r.id),
    );
    const mix = storeMix(paths, pending[0], otherKey);
    const steadyFrom = new Date();
    // As long as most of the rollout takes, so that the machine's own ups and downs weigh alike.
    steady = await loadFor(mixOptions(mix), STEADY_MS);
    log(`steady mixed load at ${RATE}/s, before: ${describeLoad(steady)}`);
    // The baseline only: its failures are printed, the checks below count those of the releases.
    if (steady.failed > 0) {
      for (const line of await stack.serverErrorsSince(steadyFrom)) log(line);
    }
    await expectCancelsKept(mix.cancelled);
    storeMixOf = (share) => storeMix(paths, pending[share], otherKey);
  }, 600_000);

  it('expand while the old release serves, roll out one at a time, back and forward: zero failed', async () => {
    const [orderId] = pending[2];
    const before = await buildInfo('app1');
    const mix = storeMixOf(1);
    const steps: string[] = [];
    const marks: { what: string; at: number }[] = [{ what: 'before', at: 0 }];
    const mark = (what: string): void => void marks.push({ what, at: Date.now() });
    const step = async (what: string, run: () => Promise<unknown>): Promise<void> => {
      const t = Date.now();
      await run();
      steps.push(`${what} ${((Date.now() - t) / 1000).toFixed(1)} s`);
    };
    let migrated = '';
    let rolledBack = { version: '', schema: '' };
    let rolledBackPriority = 0;
    const started = new Date();
    const result = await loadDuring(mixOptions(mix), async () => {
      mark('expand migration');
      await step('expand migration', async () => {
        migrated = (await stack.migrate(NEXT)).split('\n').pop() ?? '';
      });
      for (const name of INSTANCES)
        await step(`${name} to next`, () => stack.replace(name, NEXT, mark));
      await step('worker to next', () => stack.replace('worker', NEXT, mark));
      await step('app1 back', () => stack.replace('app1', APP_IMAGE, (w) => mark(`${w} (back)`)));
      rolledBack = await buildInfo('app1');
      rolledBackPriority = await priorityStatus('app1', orderId);
      await step('app1 forward', () => stack.replace('app1', NEXT, (w) => mark(`${w} (forward)`)));
      mark('after');
    });
    log(`rollout (${steps.join(', ')}) under the mix: ${describeLoad(result)}`);
    // The same steady load again, every instance on the next release.
    const after = storeMixOf(3);
    const steadyAfter = await loadFor(mixOptions(after), STEADY_MS);
    log(`steady mixed load at ${RATE}/s, after: ${describeLoad(steadyAfter)}`);
    const latencies = (r: LoadResult): number[] => r.samples.map(([, ms]) => Math.round(ms));
    const steadyP99 = percentile([...latencies(steady), ...latencies(steadyAfter)], 99);
    const rolloutP99 = percentile(latencies(result), 99);
    log(
      `p99: steady ${steadyP99} ms (before ${steady.p99}, after ${steadyAfter.p99}), ` +
        `during the rollout ${rolloutP99} ms (${(rolloutP99 / steadyP99).toFixed(2)}×)`,
    );
    // Where the slow answers came: per step, from its start to the next one's.
    for (const line of latencyBySteps(result.samples, marks)) log(`  ${line}`);
    if (result.failed > 0) for (const line of await stack.serverErrorsSince(started)) log(line);
    expect(migrated).toBe(`Applied 1 migration(s): ${EXPAND_MIGRATION}`);
    // Rolled back, the release before started on the expanded schema and serves without the route.
    expect(rolledBack).toEqual({ version: before.version, schema: EXPAND_MIGRATION });
    expect(rolledBackPriority).toBe(404);
    for (const name of INSTANCES) {
      expect(await buildInfo(name)).toEqual({
        version: before.version,
        schema: EXPAND_MIGRATION,
      });
      expect(await priorityStatus(name, orderId)).toBe(200);
    }
    expect(result.requests).toBeGreaterThan(0);
    expect(result.failed).toBe(0);
    expect(steadyAfter.failed).toBe(0);
    await expectCancelsKept([...mix.cancelled, ...after.cancelled]);
    expect(rolloutP99).toBeLessThanOrEqual(2 * steadyP99);
  }, 600_000);

  it('backfill and the contract migration while the new release serves: zero failed', async () => {
    const mix = storeMixOf(2);
    const backfill = new DataSource({
      ...dataSourceOptions(stack.migrateUrl, {
        connectTimeoutMs: 5_000,
        statementTimeoutMs: 0,
        poolSize: 1,
      }),
      entities: [],
      migrations: [],
    });
    let batches = 0;
    let migrated = '';
    const steps: string[] = [];
    const started = new Date();
    const result = await loadDuring(mixOptions(mix), async () => {
      let t = Date.now();
      await backfill.initialize();
      try {
        batches = await backfillOrderPriorities(backfill, 5_000);
      } finally {
        await backfill.destroy();
      }
      steps.push(`backfill ${batches} batches ${((Date.now() - t) / 1000).toFixed(1)} s`);
      t = Date.now();
      migrated = (await stack.migrate(AFTER)).split('\n').pop() ?? '';
      steps.push(`contract migration ${((Date.now() - t) / 1000).toFixed(1)} s`);
    });
    log(`contract (${steps.join(', ')}) under the mix: ${describeLoad(result)}`);
    if (result.failed > 0) for (const line of await stack.serverErrorsSince(started)) log(line);
    expect(migrated).toBe(`Applied 1 migration(s): ${CONTRACT_MIGRATION}`);
    const checks = await withClient(stack.migrateUrl, (c) =>
      c.query<{ convalidated: boolean }>(
        `SELECT convalidated FROM pg_constraint WHERE conname = 'CHK_orders_priority_set'`,
      ),
    );
    expect(checks.rows).toEqual([{ convalidated: true }]);
    expect(await priorityStatus('app2', pending[2][0])).toBe(200);
    expect(result.requests).toBeGreaterThan(0);
    expect(result.failed).toBe(0);
    await expectCancelsKept(mix.cancelled);
  }, 600_000);
});
