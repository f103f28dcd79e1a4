/**
 * Webhooks in `npm run bench`: a change writes its audit event and nothing else, and a worker
 * process (`SERVICE_ROLES=worker`, the same build) relays the committed events to the webhooks'
 * fan-out, which queues a delivery per subscribed endpoint, and delivers them. Measured, in one
 * run:
 *
 * - what subscribed endpoints cost a cancel: an API process (`SERVICE_ROLES=api`) with 50
 *   endpoints subscribed, its worker beside it, against one with none and its worker, driven in
 *   turns. The workers run at the lowest CPU priority: they stand for workers on other machines,
 *   whose share of these two cores would otherwise be counted against the API. Their statements
 *   still share the database with the API's, as in production;
 * - what the relay costs PostgreSQL per event (pg_stat_statements, which the bench's cluster
 *   loads), and what a cancel's statement costs with 50 endpoints and with none;
 * - commit to the receiver's first byte while the API takes 200 cancels a second;
 * - how many events a worker delivers per second with the API idle.
 *
 * Every request cancels a new pending order, so that each writes its audit event (an order
 * already cancelled writes none).
 */
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { newSecret } from '../src/webhooks/webhook-secrets';
import { urlFor, withClient } from '../test/setup/clusters';
import { AppProcess } from '../test/support/app-process';
import { bearerFor } from '../test/support/auth';
import { createMigratedDatabase } from '../test/support/migrated-database';
import { driveInTurns, LOAD, warmUp, type LoadResult, type Scenario } from './load';
import { cpuSecondsOf, cpuSecondsWithChildren } from './process-cpu';
import type { Check } from './report';

/** One run's size: `small` to see every measurement work in two minutes, `full` for the figures. */
export interface WebhooksScale {
  /** Events waiting for the worker when the throughput is measured. */
  events: number;
  /** Seconds of cancels at `rate` per second while the latency is measured. */
  latencySeconds: number;
  /** Seconds of cancels at `rate` per second while the relay's statements are counted. */
  relaySeconds: number;
  /** Seconds each API serves cancels, unmeasured, before the turns (its steady state). */
  steadyStateSeconds: number;
  /** Pending orders for each API of the cost turns (more than it can cancel). */
  ordersPerContender: number;
}

export const WEBHOOKS_SCALE: Record<'small' | 'full', WebhooksScale> = {
  small: {
    events: 2_000,
    latencySeconds: 5,
    relaySeconds: 5,
    steadyStateSeconds: 2,
    ordersPerContender: 40_000,
  },
  full: {
    events: 10_000,
    latencySeconds: 30,
    relaySeconds: 15,
    steadyStateSeconds: LOAD.steadyStateSeconds.cancel,
    ordersPerContender: 120_000,
  },
};

export const WEBHOOK_TARGETS = {
  /** Endpoints subscribed to cancellations on the API whose cancels are compared. */
  endpoints: 50,
  /** Cancel with `endpoints` subscribed ÷ cancel with none, at least. */
  cancel: 0.95,
  /** Events per second one worker delivers, at least. */
  eventsPerSecond: 1_000,
  /** Commit to the receiver's first byte, p99, under this, in ms. */
  p99Ms: 1_000,
  /** Cancels per second while the latency and the relay's cost are measured. */
  rate: 200,
} as const;

/** What the service needs to deliver to a receiver on loopback. */
const LOOPBACK_WEBHOOKS_ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
};

/** The lowest CPU priority (nice 19). */
const LOWEST_PRIORITY = 19;

/**
 * A receiver on 127.0.0.1 that answers 204 to every message (each endpoint a path of its own):
 * the time each arrives (its headers parsed: the first bytes of the request), against the
 * `timestamp` of its body (the audit event's, written by the statement that commits the change,
 * on this machine's clock).
 */
class Receiver {
  private server: Server | undefined;
  private base = '';
  /** Per endpoint (path), the webhook-ids it got. */
  private readonly byEndpoint = new Map<string, Set<string>>();
  received = 0;
  duplicates = 0;
  firstAt = 0;
  lastAt = 0;
  latenciesMs: number[] = [];

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const at = Date.now();
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        const path = req.url ?? '';
        const ids = this.byEndpoint.get(path) ?? new Set<string>();
        this.byEndpoint.set(path, ids);
        if (ids.has(id)) this.duplicates++;
        ids.add(id);
        this.received++;
        if (this.firstAt === 0) this.firstAt = at;
        this.lastAt = at;
        const { timestamp } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          timestamp: string;
        };
        this.latenciesMs.push(at - Date.parse(timestamp));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The URL of endpoint `n`. */
  url(n: number): string {
    return `${this.base}/hook/${n}`;
  }

  reset(): void {
    this.byEndpoint.clear();
    this.received = 0;
    this.duplicates = 0;
    this.firstAt = 0;
    this.lastAt = 0;
    this.latenciesMs = [];
  }

  /** Waits until `count` messages arrived since the reset (at most `timeoutMs`). */
  async got(count: number, timeoutMs: number): Promise<void> {
    const started = Date.now();
    while (this.received - this.duplicates < count) {
      if (Date.now() - started > timeoutMs) {
        throw new Error(`${this.received} of ${count} messages after ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** Pending orders `from` … `from + count - 1`, each cancelled by one request; their paths. */
async function pendingOrders(databaseUrl: string, from: number, count: number): Promise<string[]> {
  await withClient(databaseUrl, async (c) => {
    await c.query(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
       SELECT g, g % 100 + 1, 1, NULL, false, 'pending'
         FROM generate_series($1::bigint, $2::bigint) AS g`,
      [from, from + count - 1],
    );
    await c.query('VACUUM ANALYZE orders');
  });
  return Array.from({ length: count }, (_, i) => `/v1/store/orders/${from + i}`);
}

/** Whether an order of `from` … `from + count - 1` is still pending: the paths did not run out. */
async function ordersLeft(databaseUrl: string, from: number, count: number): Promise<boolean> {
  return await withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ left: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM orders WHERE id BETWEEN $1 AND $2 AND status = 'pending')
         AS left`,
      [from, from + count - 1],
    );
    return rows[0].left;
  });
}

/** Endpoints subscribed to cancellations, stored as the service stores one (no encryption). */
async function subscribe(databaseUrl: string, urls: readonly string[]): Promise<void> {
  await withClient(databaseUrl, async (c) => {
    for (const url of urls) {
      await c.query(
        `INSERT INTO webhook_endpoints (url, events, secret) VALUES ($1, '{order.cancelled}', $2)`,
        [url, `plain:${newSecret()}`],
      );
    }
  });
}

/** The last audit event's id (0: none). */
async function lastEventId(databaseUrl: string): Promise<string> {
  return await withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ id: string }>(
      'SELECT COALESCE(max(id), 0)::text AS id FROM audit_events',
    );
    return rows[0].id;
  });
}

/** Cancellations recorded after the event `after`. */
async function cancellationsAfter(databaseUrl: string, after: string): Promise<number> {
  return await withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_events WHERE id > $1 AND action = 'order.cancelled'`,
      [after],
    );
    return rows[0].n;
  });
}

/** Waits until the relay's cursor has passed every committed event (at most `timeoutMs`). */
async function relayed(databaseUrl: string, timeoutMs: number): Promise<void> {
  const started = Date.now();
  await withClient(databaseUrl, async (c) => {
    for (;;) {
      const { rows } = await c.query<{ behind: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM audit_events e, event_relay r
                         WHERE r.name = 'audit' AND (e.xid, e.id) > (r.xid, r.event_id)) AS behind`,
      );
      if (!rows[0].behind) return;
      if (Date.now() - started > timeoutMs) throw new Error(`relay behind after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
}

/** What a set of statements cost PostgreSQL, as pg_stat_statements counts them. */
export interface StatementCost {
  calls: number;
  /** Execution time, in ms. */
  ms: number;
  walBytes: number;
  /** Rows the statements returned or changed. */
  rows: number;
}

/**
 * The statements of one database, as pg_stat_statements (loaded by the bench's cluster) counts
 * them: reset, then summed over those whose normalised text matches a pattern.
 */
class StatementStats {
  constructor(private readonly adminUrl: string) {}

  static async of(pgPort: number): Promise<StatementStats> {
    const adminUrl = urlFor(pgPort, 'postgres');
    await withClient(adminUrl, (c) => c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements'));
    return new StatementStats(adminUrl);
  }

  async reset(databaseUrl: string): Promise<void> {
    await withClient(this.adminUrl, (c) =>
      c.query(
        `SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = $1), 0)`,
        [databaseName(databaseUrl)],
      ),
    );
  }

  /** The sum over the statements of `databaseUrl` whose text matches any of `patterns`. */
  async cost(databaseUrl: string, patterns: readonly string[]): Promise<StatementCost> {
    return await withClient(this.adminUrl, async (c) => {
      const { rows } = await c.query<StatementCost>(
        `SELECT COALESCE(sum(calls), 0)::float8 AS calls,
                COALESCE(sum(total_exec_time), 0)::float8 AS ms,
                COALESCE(sum(wal_bytes), 0)::float8 AS "walBytes",
                COALESCE(sum(rows), 0)::float8 AS rows
           FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
          WHERE d.datname = $1 AND s.query ~ ANY ($2::text[])`,
        [databaseName(databaseUrl), patterns],
      );
      return rows[0];
    });
  }
}

const databaseName = (url: string): string => new URL(url).pathname.slice(1);

/** The cancel's one statement (the conditional UPDATE and its audit event). */
const CANCEL_STATEMENT = ['^\\s*WITH cancelled AS \\(\\s*UPDATE orders'];

/**
 * The relay's statements: its lock, its cursor, the next events, the jobs it inserts through
 * pg-boss (one statement a consumer and batch; in a database without endpoints, no other part of
 * the service inserts jobs) and its cursor's move.
 */
const RELAY_STATEMENTS = [
  'pg_try_advisory_xact_lock',
  'FROM event_relay',
  'UPDATE event_relay',
  'pg_snapshot_xmin',
  'INSERT INTO pgboss\\.',
];

/**
 * pg-boss's work of the consumers' jobs (fetches, completions, its supervision), and the
 * webhooks' fan-out finding no endpoint: what a consumer's run costs, beside the relay.
 */
const CONSUMER_STATEMENTS = [
  '^(?![\\s\\S]*INSERT INTO pgboss\\.)[\\s\\S]*pgboss\\.',
  'INSERT INTO webhook_deliveries',
];

const quantile = (values: number[], q: number): number => {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

export interface WebhooksResult {
  scale: WebhooksScale;
  cost: {
    /** The API with `WEBHOOK_TARGETS.endpoints` endpoints subscribed, its worker beside it. */
    subscribed: LoadResult;
    /** The API with none, its worker beside it. */
    none: LoadResult;
    /** The cancel's statement in either database during the turns. */
    statement: { subscribed: StatementCost; none: StatementCost };
    /** Messages the subscribed API's worker delivered while the turns ran. */
    deliveredInTurns: number;
    /** Cancellations the subscribed API committed in the turns (warm-ups included). */
    cancelledInTurns: number;
  };
  relay: {
    rate: number;
    seconds: number;
    events: number;
    relay: StatementCost;
    consumer: StatementCost;
  };
  latency: {
    rate: number;
    seconds: number;
    events: number;
    received: number;
    duplicates: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
  };
  throughput: {
    events: number;
    received: number;
    duplicates: number;
    /** First receipt to last. */
    seconds: number;
    /** The worker's resumption to the last receipt. */
    resumedToLastSeconds: number;
    /** CPU time per event from the worker's resumption to the last receipt, in ms. */
    cpuMsPerEvent: { worker: number; database: number; receiver: number };
  };
}

/** Registers a started process, for the bench to stop whatever happens. */
export type Track = (app: AppProcess) => void;

const cancel: Scenario = {
  name: 'cancel',
  method: 'DELETE',
  path: '/v1/store/orders/0',
  status: 204,
};

/** The pid of the PostgreSQL postmaster listening on `pgPort`. */
async function postmasterOf(pgPort: number): Promise<number> {
  const dataDirectory = await withClient(urlFor(pgPort, 'postgres'), async (c) => {
    const { rows } = await c.query<{ data_directory: string }>('SHOW data_directory');
    return rows[0].data_directory;
  });
  return Number(readFileSync(join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** `rate` cancels a second for `seconds`, each of a new order of `paths`; fails on any error. */
async function cancelsAt(
  url: string,
  headers: Record<string, string>,
  paths: readonly string[],
  rate: number,
  seconds: number,
): Promise<void> {
  let next = 0;
  const load = await autocannon({
    url: `${url}/v1/store/orders/0`,
    method: 'DELETE',
    headers,
    connections: 10,
    overallRate: rate,
    duration: seconds,
    timeout: 10,
    requests: [{ setupRequest: (r) => ({ ...r, path: paths[next++] }) }],
  });
  const cancels = load.statusCodeStats?.['204']?.count ?? 0;
  if (load.errors > 0 || cancels !== load.requests.total || next > paths.length) {
    throw new Error(`cancels at ${rate}/s: ${JSON.stringify(load.statusCodeStats)}`);
  }
}

/**
 * The measurements, on databases of their own on the cluster at `pgPort` (which loads
 * pg_stat_statements). Every process it starts goes to `track`.
 */
export async function measureWebhooks(
  pgPort: number,
  track: Track,
  scale: WebhooksScale,
  log: (message: string) => void,
): Promise<WebhooksResult> {
  const stats = await StatementStats.of(pgPort);
  const receiver = await new Receiver().start();
  const env = (databaseUrl: string) => ({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'info',
    ...LOOPBACK_WEBHOOKS_ENV,
  });
  const api = async (databaseUrl: string) => {
    const started = await AppProcess.start(['node', 'dist/main.js'], {
      ...env(databaseUrl),
      SERVICE_ROLES: 'api',
    });
    track(started.app);
    started.app.discardOutput();
    return started;
  };
  const worker = async (databaseUrl: string, command = ['node', 'dist/main.js']) => {
    const app = await AppProcess.startWorker(command, env(databaseUrl));
    track(app);
    app.discardOutput();
    return app;
  };
  try {
    const { endpoints, rate } = WEBHOOK_TARGETS;
    const subscribedDb = await createMigratedDatabase(pgPort, 'webhooks_subscribed');
    const noneDb = await createMigratedDatabase(pgPort, 'webhooks_none');
    const deliveryDb = await createMigratedDatabase(pgPort, 'webhooks_delivery');
    await subscribe(
      subscribedDb,
      Array.from({ length: endpoints }, (_, n) => receiver.url(n)),
    );
    await subscribe(deliveryDb, [receiver.url(0)]);

    // What subscribers cost a cancel. Each API's orders: a quarter for its steady state, the
    // rest for the turns (a path serves one request: cancelled twice, an order writes no event).
    const n = scale.ordersPerContender;
    const from = { subscribed: 1_000_000, none: 2_000_000 };
    const paths = {
      subscribed: await pendingOrders(subscribedDb, from.subscribed, n),
      none: await pendingOrders(noneDb, from.none, n),
    };
    const warm = n / 4;
    const headers = { subscribed: await bearerFor(subscribedDb), none: await bearerFor(noneDb) };
    const subscribedApi = await api(subscribedDb);
    const noneApi = await api(noneDb);
    const subscribedWorker = await worker(subscribedDb);
    const noneWorker = await worker(noneDb);
    for (const { pid } of [subscribedWorker, noneWorker]) setPriority(pid, LOWEST_PRIORITY);
    const contender = (url: string, name: 'subscribed' | 'none', turns: boolean) => ({
      url,
      headers: headers[name],
      paths: turns ? paths[name].slice(warm) : paths[name].slice(0, warm),
    });
    const eventsBefore = await lastEventId(subscribedDb);
    log(`webhooks: cancels of an API with ${endpoints} endpoints and of one with none, in turns…`);
    await warmUp(
      [contender(subscribedApi.url, 'subscribed', false), contender(noneApi.url, 'none', false)],
      cancel,
      scale.steadyStateSeconds,
    );
    for (const db of [subscribedDb, noneDb]) await stats.reset(db);
    receiver.reset();
    const turns = await driveInTurns(
      {
        subscribed: contender(subscribedApi.url, 'subscribed', true),
        none: contender(noneApi.url, 'none', true),
      },
      cancel,
    );
    const deliveredInTurns = receiver.received;
    const statement = {
      subscribed: await stats.cost(subscribedDb, CANCEL_STATEMENT),
      none: await stats.cost(noneDb, CANCEL_STATEMENT),
    };
    for (const name of ['subscribed', 'none'] as const) {
      const db = name === 'subscribed' ? subscribedDb : noneDb;
      const left = [
        await ordersLeft(db, from[name], warm),
        await ordersLeft(db, from[name] + warm, n - warm),
      ];
      if (left.includes(false)) throw new Error(`${name} ran out of pending orders`);
    }
    const cancelledInTurns = await cancellationsAfter(subscribedDb, eventsBefore);
    // The backlog of the subscribed API's deliveries is not waited for: its worker's rate is
    // measured below, with one endpoint.
    for (const app of [subscribedWorker, subscribedApi.app, noneWorker]) await app.stop();

    // What the relay costs, at a steady rate of changes: a worker at the usual priority on the
    // database without endpoints, where no other part inserts jobs.
    log(`webhooks: the relay's statements at ${rate} cancels/s…`);
    const relayWorker = await worker(noneDb);
    await relayed(noneDb, 120_000);
    const relayFrom = from.none + n;
    const relayPaths = await pendingOrders(noneDb, relayFrom, rate * scale.relaySeconds * 2);
    const relayBefore = await lastEventId(noneDb);
    await stats.reset(noneDb);
    await cancelsAt(noneApi.url, headers.none, relayPaths, rate, scale.relaySeconds);
    await relayed(noneDb, 60_000);
    // Its last batch's jobs consumed too, for the consumer's share.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const relay = {
      rate,
      seconds: scale.relaySeconds,
      events: await cancellationsAfter(noneDb, relayBefore),
      relay: await stats.cost(noneDb, RELAY_STATEMENTS),
      consumer: await stats.cost(noneDb, CONSUMER_STATEMENTS),
    };
    for (const app of [relayWorker, noneApi.app]) await app.stop();

    // Commit to the receiver's first byte, and the rate of a worker, with one endpoint.
    const latencyOrders = rate * (scale.latencySeconds + 5) * 2;
    const deliveryPaths = await pendingOrders(deliveryDb, 5_000_000, latencyOrders + scale.events);
    const deliveryHeaders = await bearerFor(deliveryDb);
    const deliveryApi = await api(deliveryDb);
    const deliveryWorker = await worker(deliveryDb);
    log(`webhooks: commit to receipt while the API takes ${rate} cancels/s…`);
    // First 5 s unmeasured: the worker's steady state.
    let before = await lastEventId(deliveryDb);
    receiver.reset();
    const warmPaths = deliveryPaths.slice(0, rate * 5 * 2);
    await cancelsAt(deliveryApi.url, deliveryHeaders, warmPaths, rate, 5);
    await receiver.got(await cancellationsAfter(deliveryDb, before), 120_000);
    before = await lastEventId(deliveryDb);
    receiver.reset();
    const latencyPaths = deliveryPaths.slice(warmPaths.length, latencyOrders);
    await cancelsAt(deliveryApi.url, deliveryHeaders, latencyPaths, rate, scale.latencySeconds);
    const latencyEvents = await cancellationsAfter(deliveryDb, before);
    await receiver.got(latencyEvents, 120_000);
    const latency = {
      rate,
      seconds: scale.latencySeconds,
      events: latencyEvents,
      received: receiver.received,
      duplicates: receiver.duplicates,
      p50Ms: quantile(receiver.latenciesMs, 0.5),
      p99Ms: quantile(receiver.latenciesMs, 0.99),
      maxMs: Math.max(...receiver.latenciesMs),
    };

    log(`webhooks: ${scale.events.toLocaleString('en-US')} events waiting, the API idle…`);
    // The worker stopped (SIGSTOP) while the API commits the events, then let go.
    deliveryWorker.kill('SIGSTOP');
    before = await lastEventId(deliveryDb);
    const throughputPaths = deliveryPaths.slice(latencyOrders);
    await autocannon({
      url: `${deliveryApi.url}/v1/store/orders/0`,
      method: 'DELETE',
      headers: deliveryHeaders,
      connections: 10,
      amount: scale.events,
      timeout: 10,
      requests: [{ setupRequest: (r) => ({ ...r, path: throughputPaths.shift() }) }],
    });
    const events = await cancellationsAfter(deliveryDb, before);
    if (events !== scale.events) throw new Error(`${events} of ${scale.events} events committed`);
    receiver.reset();
    const postmaster = await postmasterOf(pgPort);
    const cpuBefore = {
      worker: cpuSecondsOf(deliveryWorker.pid),
      database: cpuSecondsWithChildren(postmaster),
      receiver: process.cpuUsage(),
    };
    const resumedAt = Date.now();
    deliveryWorker.kill('SIGCONT');
    await receiver.got(events, 300_000);
    const receiverCpu = process.cpuUsage(cpuBefore.receiver);
    const cpuMsPerEvent = {
      worker: ((cpuSecondsOf(deliveryWorker.pid) - cpuBefore.worker) * 1000) / events,
      database: ((cpuSecondsWithChildren(postmaster) - cpuBefore.database) * 1000) / events,
      receiver: (receiverCpu.user + receiverCpu.system) / 1000 / events,
    };
    const throughput = {
      events,
      received: receiver.received,
      duplicates: receiver.duplicates,
      seconds: (receiver.lastAt - receiver.firstAt) / 1000,
      resumedToLastSeconds: (receiver.lastAt - resumedAt) / 1000,
      cpuMsPerEvent,
    };
    return {
      scale,
      cost: {
        subscribed: turns.subscribed,
        none: turns.none,
        statement,
        deliveredInTurns,
        cancelledInTurns,
      },
      relay,
      latency,
      throughput,
    };
  } finally {
    await receiver.stop();
  }
}

const fmt = (value: number, digits = 0): string =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const load = (r: LoadResult): string =>
  `${fmt(r.requestsPerSecond)} (${fmt(r.p50Ms)} / ${fmt(r.p99Ms)})`;

/** Events per second from the first receipt to the last. */
const perSecond = (t: WebhooksResult['throughput']): number => (t.received - 1) / t.seconds;

export function webhooksChecks(r: WebhooksResult): Check[] {
  const cost = r.cost.subscribed.requestsPerSecond / r.cost.none.requestsPerSecond;
  const { throughput: t, latency: l } = r;
  return [
    {
      name: `webhooks: cancel with ${WEBHOOK_TARGETS.endpoints} endpoints (delivered by a worker) ÷ with none`,
      target: `≥ ${WEBHOOK_TARGETS.cancel.toFixed(2)}×`,
      actual: `${cost.toFixed(3)}×`,
      pass: cost >= WEBHOOK_TARGETS.cancel,
    },
    {
      name: `webhooks: ${fmt(t.events)} events delivered by a worker, API idle`,
      target: `≥ ${fmt(WEBHOOK_TARGETS.eventsPerSecond)}/s, each once`,
      actual: `${fmt(perSecond(t))}/s, ${fmt(t.received)} received, ${t.duplicates} twice`,
      pass:
        perSecond(t) >= WEBHOOK_TARGETS.eventsPerSecond &&
        t.received === t.events &&
        t.duplicates === 0,
    },
    {
      name: `webhooks: commit to the receiver's first byte at ${l.rate} cancels/s, p99`,
      target: `< ${fmt(WEBHOOK_TARGETS.p99Ms)} ms, every event once`,
      actual: `${fmt(l.p99Ms)} ms, ${fmt(l.received)} of ${fmt(l.events)}, ${l.duplicates} twice`,
      pass: l.p99Ms < WEBHOOK_TARGETS.p99Ms && l.received === l.events && l.duplicates === 0,
    },
  ];
}

/** A statement's cost per unit: time in µs, WAL in bytes. */
const per = (c: StatementCost, units: number): string =>
  `${fmt((c.ms * 1000) / units, 1)} µs, ${fmt(c.walBytes / units)} B of WAL`;

/** The section of BENCHMARKS.md. */
export function webhooksReport(r: WebhooksResult): string {
  const { cost, relay, throughput: t, latency: l } = r;
  const { endpoints } = WEBHOOK_TARGETS;
  const ratio = (cost.subscribed.requestsPerSecond / cost.none.requestsPerSecond).toFixed(2);
  const s = cost.statement;
  return [
    `Cancels of pending orders (every request a real change, its audit event written), in turns`,
    `as above: an API process (\`SERVICE_ROLES=api\`) with ${endpoints} endpoints subscribed to`,
    `\`order.cancelled\` (a receiver on 127.0.0.1 answering 204), and one with none, each on its own`,
    `database with a worker process (\`SERVICE_ROLES=worker\`) beside it at the lowest CPU priority`,
    `(nice 19: a worker elsewhere, sharing the database).`,
    '',
    '| cancel of a pending order | req/s (p50 / p99 ms) | ÷ none | target |',
    '|---|--:|--:|--:|',
    `| API, ${endpoints} endpoints, worker beside it | ${load(cost.subscribed)} | **${ratio}×** | ≥ ${WEBHOOK_TARGETS.cancel.toFixed(2)}× |`,
    `| API, no endpoint, worker beside it | ${load(cost.none)} | 1.00× | |`,
    '',
    `The cancel's statement (pg_stat_statements, the turns' calls): ${per(s.subscribed, s.subscribed.calls)}`,
    `a call with ${endpoints} endpoints, ${per(s.none, s.none.calls)} with none. The worker of the`,
    `${endpoints} endpoints delivered ${fmt(cost.deliveredInTurns)} messages while the turns ran`,
    `(${fmt(cost.cancelledInTurns)} cancels × ${endpoints} endpoints were due); the rest is not waited for.`,
    '',
    `- The relay at ${relay.rate} cancels/s for ${relay.seconds} s (${fmt(relay.events)} events,`,
    `  one consumer; its lock, cursor, read, pg-boss's job insert and cursor move, its idle polls`,
    `  included; pg_stat_statements): **${per(relay.relay, relay.events)} per event**,`,
    `  ${fmt(relay.relay.calls)} statements. The consumer's jobs (pg-boss's fetches and completions,`,
    `  the fan-out finding no endpoint): ${per(relay.consumer, relay.events)} per event.`,
    `- Commit to the receiver's first byte while the API takes ${l.rate} cancels/s (autocannon`,
    `  \`overallRate\`, ${fmt(l.seconds)} s after 5 s unmeasured; one endpoint; ${fmt(l.events)} events,`,
    `  ${fmt(l.received)} received, ${l.duplicates} twice): p50 ${fmt(l.p50Ms)} ms, **p99 ${fmt(l.p99Ms)} ms**,`,
    `  max ${fmt(l.maxMs)} ms (the body's \`timestamp\` against the receiver's clock, same machine).`,
    `  Target p99 < ${fmt(WEBHOOK_TARGETS.p99Ms)} ms.`,
    `- A worker with the API idle: ${fmt(t.events)} cancels committed while it was stopped`,
    `  (SIGSTOP), then let go: ${fmt(t.received)} received, ${t.duplicates} twice; first receipt to`,
    `  last ${fmt(t.seconds, 2)} s: **${fmt(perSecond(t))} events/s** (resumed to last receipt`,
    `  ${fmt(t.resumedToLastSeconds, 2)} s). Target ≥ ${fmt(WEBHOOK_TARGETS.eventsPerSecond)}/s.`,
    `  CPU per event: worker ${fmt(t.cpuMsPerEvent.worker, 2)} ms, PostgreSQL`,
    `  ${fmt(t.cpuMsPerEvent.database, 2)} ms, the receiver ${fmt(t.cpuMsPerEvent.receiver, 2)} ms.`,
  ].join('\n');
}
