/**
 * Webhooks in `npm run bench`: what a subscribed endpoint costs a cancel, how many events a
 * service delivers per second to a receiver on loopback with the API idle, and how soon after its
 * commit an event reaches the receiver while the API takes a steady rate of cancels.
 *
 * Each measurement runs on databases of its own (the trigger on the audit trail fans out to every
 * endpoint of a database), with a real cancel per request: a new pending order each time, so that
 * every request writes its audit event (an order already cancelled writes none).
 */
import autocannon from 'autocannon';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newSecret } from '../src/webhooks/webhook-secrets';
import { withClient } from '../test/setup/clusters';
import { bearerFor } from '../test/support/auth';
import { createMigratedDatabase } from '../test/support/migrated-database';
import { driveInTurns, type LoadResult } from './load';
import type { Check } from './report';

/** One run's size: `small` to see every scenario work in a minute, `full` for the figures. */
export interface WebhooksScale {
  /** Events queued at once for the throughput. */
  events: number;
  /** Seconds of cancels at `rate` per second while the latency is measured. */
  latencySeconds: number;
  /** Pending orders for each contender of the cost turns (more than it can cancel). */
  ordersPerContender: number;
}

export const WEBHOOKS_SCALE: Record<'small' | 'full', WebhooksScale> = {
  small: { events: 500, latencySeconds: 5, ordersPerContender: 40_000 },
  full: { events: 5_000, latencySeconds: 30, ordersPerContender: 120_000 },
};

export const WEBHOOK_TARGETS = {
  /** Cancel with one subscribed endpoint ÷ bare NestJS's cancel. */
  cancel: 0.75,
  /** Events per second delivered, at least. */
  eventsPerSecond: 500,
  /** Commit to the receiver's first byte, p99, at most, in ms. */
  p99Ms: 2_000,
  /** Cancels per second while the latency is measured. */
  rate: 200,
} as const;

/** What the service needs to deliver to a receiver on loopback. */
export const LOOPBACK_WEBHOOKS_ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
};

/**
 * A receiver on 127.0.0.1 that answers 204 to every message: the time each arrives (its headers
 * parsed: the first bytes of the request), against the `timestamp` of its body (the audit event's,
 * written by the statement that commits the change, on this machine's clock).
 */
class Receiver {
  private server: Server | undefined;
  url = '';
  ids = new Set<string>();
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
        if (this.ids.has(id)) this.duplicates++;
        this.ids.add(id);
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
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  reset(): void {
    this.ids = new Set();
    this.duplicates = 0;
    this.firstAt = 0;
    this.lastAt = 0;
    this.latenciesMs = [];
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

/** An endpoint subscribed to cancellations, stored as the service stores one (no encryption). */
async function subscribe(databaseUrl: string, url: string): Promise<void> {
  await withClient(databaseUrl, (c) =>
    c.query(
      `INSERT INTO webhook_endpoints (url, events, secret) VALUES ($1, '{order.cancelled}', $2)`,
      [url, `plain:${newSecret()}`],
    ),
  );
}

/** Deliveries queued so far. */
async function deliveries(databaseUrl: string): Promise<number> {
  return await withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_deliveries',
    );
    return rows[0].n;
  });
}

/** Waits until no delivery is pending (at most `timeoutMs`); answers how long that took. */
async function drained(databaseUrl: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  await withClient(databaseUrl, async (c) => {
    for (;;) {
      const { rows } = await c.query<{ pending: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE status = 'pending') AS pending`,
      );
      if (!rows[0].pending) return;
      if (Date.now() - started > timeoutMs) {
        throw new Error(`deliveries still pending after ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  return Date.now() - started;
}

const quantile = (values: number[], q: number): number => {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

export interface WebhooksResult {
  scale: WebhooksScale;
  cost: {
    webhooks: LoadResult;
    /** The same endpoint, on a service that only queues (WEBHOOK_DELIVERY=off). */
    queued: LoadResult;
    service: LoadResult;
    bareNest: LoadResult;
    drainMs: number;
    /** Deliveries queued by the turns (every cancel of the subscribed service). */
    queuedInTurns: number;
    /** Of those, the ones that reached the receiver while the turns ran, not in the drains. */
    deliveredInTurns: number;
  };
  throughput: {
    events: number;
    received: number;
    duplicates: number;
    /** First receipt to last. */
    seconds: number;
    /** Commit of the events' one transaction to the last receipt. */
    commitToLastSeconds: number;
  };
  latency: {
    rate: number;
    seconds: number;
    cancels: number;
    /** Deliveries queued meanwhile (each cancel's, and those still under way at the end). */
    queued: number;
    received: number;
    duplicates: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
  };
}

/** How the bench starts a server: its command and environment; stopped by the bench. */
export type Launch = (
  command: readonly string[],
  env: Record<string, string>,
) => Promise<{ url: string }>;

/**
 * The three measurements, on two new databases of the cluster at `pgPort`: one with the
 * subscribed endpoint, one with none (where the service and bare NestJS cancel).
 */
export async function measureWebhooks(
  pgPort: number,
  launch: Launch,
  scale: WebhooksScale,
  log: (message: string) => void,
): Promise<WebhooksResult> {
  const subscribed = await createMigratedDatabase(pgPort, 'webhooks_subscribed');
  const plain = await createMigratedDatabase(pgPort, 'webhooks_plain');
  const queuedOnly = await createMigratedDatabase(pgPort, 'webhooks_queued');
  const [headers, plainHeaders] = [await bearerFor(subscribed), await bearerFor(plain)];
  const queuedHeaders = await bearerFor(queuedOnly);
  const receiver = await new Receiver().start();
  try {
    await subscribe(subscribed, receiver.url);
    await subscribe(queuedOnly, receiver.url);
    const service = (url: string, env: Record<string, string> = {}) =>
      launch(['node', 'dist/main.js'], {
        DATABASE_URL: url,
        LOG_LEVEL: 'info',
        ...LOOPBACK_WEBHOOKS_ENV,
        ...env,
      });
    const webhooks = await service(subscribed);
    const queuer = await service(queuedOnly, { WEBHOOK_DELIVERY: 'off' });
    const bare = await service(plain);
    const bareNest = await launch(
      ['node', '--require', '@swc-node/register', 'bench/reference/bare-nest.ts'],
      { DATABASE_URL: plain },
    );
    const n = scale.ordersPerContender;
    const ranges = {
      webhooks: 1_000_000,
      queued: 4_000_000,
      service: 2_000_000,
      bareNest: 3_000_000,
    };
    const paths = {
      webhooks: await pendingOrders(subscribed, ranges.webhooks, n),
      queued: await pendingOrders(queuedOnly, ranges.queued, n),
      service: await pendingOrders(plain, ranges.service, n),
      bareNest: await pendingOrders(plain, ranges.bareNest, n),
    };

    log('webhooks: cancel with one subscribed endpoint, the service, bare NestJS in turns…');
    let drainMs = 0;
    let deliveredInTurns = 0;
    let receivedAfterDrain = 0;
    const cancel = {
      name: 'cancel',
      method: 'DELETE',
      path: '/v1/store/orders/0',
      status: 204,
    } as const;
    const turns = await driveInTurns(
      {
        webhooks: {
          url: webhooks.url,
          headers,
          paths: paths.webhooks,
          // Its backlog delivered before the next server's turn, untimed: it runs on the same cores.
          afterRun: async () => {
            deliveredInTurns += receiver.ids.size - receivedAfterDrain;
            drainMs += await drained(subscribed, 120_000);
            receivedAfterDrain = receiver.ids.size;
          },
        },
        queued: { url: queuer.url, headers: queuedHeaders, paths: paths.queued },
        service: { url: bare.url, headers: plainHeaders, paths: paths.service },
        bareNest: { url: bareNest.url, headers: plainHeaders, paths: paths.bareNest },
      },
      cancel,
    );
    for (const [name, from] of Object.entries(ranges)) {
      const url = { webhooks: subscribed, queued: queuedOnly }[name] ?? plain;
      if (!(await ordersLeft(url, from, n))) throw new Error(`${name} ran out of pending orders`);
    }

    const queuedInTurns = await deliveries(subscribed);
    log(`webhooks: ${scale.events.toLocaleString('en-US')} events at once, the API idle…`);
    receiver.reset();
    const committedAt = Date.now();
    await withClient(subscribed, (c) =>
      c.query(
        `INSERT INTO audit_events (actor, action, target, request_id)
         SELECT 'key:bench', 'order.cancelled', 'order:' || g, NULL
           FROM generate_series($1::bigint, $2::bigint) AS g`,
        [ranges.webhooks, ranges.webhooks + scale.events - 1],
      ),
    );
    await drained(subscribed, 300_000);
    const throughput = {
      events: scale.events,
      received: receiver.ids.size,
      duplicates: receiver.duplicates,
      seconds: (receiver.lastAt - receiver.firstAt) / 1000,
      commitToLastSeconds: (receiver.lastAt - committedAt) / 1000,
    };

    const rate = WEBHOOK_TARGETS.rate;
    log(`webhooks: commit to receipt while the API takes ${rate} cancels/s…`);
    const from = 5_000_000;
    const latencyPaths = await pendingOrders(subscribed, from, rate * scale.latencySeconds * 2);
    receiver.reset();
    const queuedBefore = await deliveries(subscribed);
    let next = 0;
    const load = await autocannon({
      url: `${webhooks.url}/v1/store/orders/0`,
      method: 'DELETE',
      headers,
      connections: 10,
      overallRate: rate,
      duration: scale.latencySeconds,
      timeout: 10,
      requests: [{ setupRequest: (r) => ({ ...r, path: latencyPaths[next++] }) }],
    });
    const cancels = load.statusCodeStats?.['204']?.count ?? 0;
    if (load.errors > 0 || cancels !== load.requests.total) {
      throw new Error(`cancels at ${rate}/s: ${JSON.stringify(load.statusCodeStats)}`);
    }
    await drained(subscribed, 120_000);
    const latency = {
      rate,
      seconds: load.duration,
      cancels,
      // autocannon counts the answers within its duration; a few more cancels may be under way.
      queued: (await deliveries(subscribed)) - queuedBefore,
      received: receiver.ids.size,
      duplicates: receiver.duplicates,
      p50Ms: quantile(receiver.latenciesMs, 0.5),
      p99Ms: quantile(receiver.latenciesMs, 0.99),
      maxMs: Math.max(...receiver.latenciesMs),
    };
    return {
      scale,
      cost: { ...turns, drainMs, queuedInTurns, deliveredInTurns },
      throughput,
      latency,
    };
  } finally {
    await receiver.stop();
  }
}

const fmt = (value: number, digits = 0): string =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const load = (r: LoadResult): string =>
  `${fmt(r.requestsPerSecond)} (${fmt(r.p50Ms)} / ${fmt(r.p99Ms)})`;

export function webhooksChecks(r: WebhooksResult): Check[] {
  const cost = r.cost.webhooks.requestsPerSecond / r.cost.bareNest.requestsPerSecond;
  const perSecond = (r.throughput.received - 1) / r.throughput.seconds;
  return [
    {
      name: 'cancel with one subscribed endpoint ÷ bare NestJS cancel',
      target: `≥ ${WEBHOOK_TARGETS.cancel.toFixed(2)}×`,
      actual: `${cost.toFixed(2)}×`,
      pass: cost >= WEBHOOK_TARGETS.cancel,
    },
    {
      name: `webhooks: ${fmt(r.throughput.events)} events delivered, API idle`,
      target: `≥ ${WEBHOOK_TARGETS.eventsPerSecond}/s, each once`,
      actual: `${fmt(perSecond)}/s, ${fmt(r.throughput.received)} received, ${r.throughput.duplicates} twice`,
      pass:
        perSecond >= WEBHOOK_TARGETS.eventsPerSecond &&
        r.throughput.received === r.throughput.events &&
        r.throughput.duplicates === 0,
    },
    {
      name: `webhooks: commit to the receiver's first byte at ${r.latency.rate} cancels/s, p99`,
      target: `< ${fmt(WEBHOOK_TARGETS.p99Ms)} ms, every event`,
      actual: `${fmt(r.latency.p99Ms)} ms, ${fmt(r.latency.received)} of ${fmt(r.latency.queued)}`,
      pass:
        r.latency.p99Ms < WEBHOOK_TARGETS.p99Ms &&
        r.latency.received === r.latency.queued &&
        r.latency.queued >= r.latency.cancels &&
        r.latency.duplicates === 0,
    },
  ];
}

/** The section of BENCHMARKS.md. */
export function webhooksReport(r: WebhooksResult): string {
  const { cost, throughput: t, latency: l } = r;
  const ratio = (a: LoadResult, b: LoadResult) =>
    `${(a.requestsPerSecond / b.requestsPerSecond).toFixed(2)}×`;
  return [
    `Cancels of pending orders (every request a real change, its audit event written), in turns`,
    `as above: the service with one endpoint subscribed to \`order.cancelled\` (a receiver on`,
    `127.0.0.1 answering 204; the service delivers as it goes, and its backlog is delivered before`,
    `the next server's turn, untimed: ${fmt(cost.drainMs / 1000, 1)} s in all), the service with`,
    `no endpoint, and bare NestJS with no endpoint (the same SQL; its own database).`,
    '',
    '| cancel of a pending order | req/s (p50 / p99 ms) | ÷ bare NestJS | target |',
    '|---|--:|--:|--:|',
    `| service, one subscribed endpoint | ${load(cost.webhooks)} | **${ratio(cost.webhooks, cost.bareNest)}** | ≥ ${WEBHOOK_TARGETS.cancel.toFixed(2)}× |`,
    `| service, one subscribed endpoint, \`WEBHOOK_DELIVERY=off\` | ${load(cost.queued)} | ${ratio(cost.queued, cost.bareNest)} | |`,
    `| service, no endpoint | ${load(cost.service)} | ${ratio(cost.service, cost.bareNest)} | |`,
    `| bare NestJS | ${load(cost.bareNest)} | 1.00× | |`,
    '',
    `The delivery row and its job (and the delivering, on the same cores): the service with the`,
    `endpoint ÷ without: ${ratio(cost.webhooks, cost.service)}. A busy instance puts its deliveries behind its`,
    `requests: of ${fmt(cost.queuedInTurns)} deliveries queued by the turns, ${fmt(cost.deliveredInTurns)} reached the receiver`,
    `while they ran, the rest in the drains.`,
    '',
    `- Delivered with the API idle: ${fmt(t.events)} events committed in one transaction (one`,
    `  INSERT … SELECT into the audit trail), ${fmt(t.received)} received, ${t.duplicates} twice;`,
    `  first receipt to last ${fmt(t.seconds, 2)} s: **${fmt((t.received - 1) / t.seconds)} events/s**`,
    `  (commit to last receipt ${fmt(t.commitToLastSeconds, 2)} s). Target ≥ ${WEBHOOK_TARGETS.eventsPerSecond}/s.`,
    `- Commit to the receiver's first byte while the API takes ${l.rate} cancels/s (autocannon`,
    `  \`overallRate\`, ${fmt(l.seconds)} s, ${fmt(l.cancels)} cancels answered in that time,
  ${fmt(l.queued)} deliveries queued, ${fmt(l.received)} received,`,
    `  ${l.duplicates} twice): p50 ${fmt(l.p50Ms)} ms, **p99 ${fmt(l.p99Ms)} ms**, max ${fmt(l.maxMs)} ms`,
    `  (the body's \`timestamp\` against the receiver's clock, same machine). Target p99 < ${fmt(WEBHOOK_TARGETS.p99Ms)} ms.`,
  ].join('\n');
}
