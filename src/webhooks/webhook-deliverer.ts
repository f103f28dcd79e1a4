import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PinoLogger } from 'nestjs-pino';
import type { PgBoss } from 'pg-boss';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { EntityManager } from 'typeorm';
import { type JobQueue, NOTIFIED_POLL_SECONDS } from '../events/job-queue';
import type { MetricsService } from '../metrics/metrics.service';
import type { WebhookResolver } from './webhook-addresses';
import type { ClaimedDelivery, WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import type { WebhookEndpointsRepository } from './webhook-endpoints.repository';
import type { WebhookMessages } from './webhook-messages';
import { DELIVERY_QUEUE, queueAttempt } from './webhook-queue';
import { type SecretBox, signatureHeader } from './webhook-secrets';
import { type AttemptResult, KEPT_ANSWER_BYTES, sendAttempt } from './webhook-sender';
import type { WebhooksSettings } from './webhooks.settings';

/** This package's version, for the messages' User-Agent (package.json two folders up). */
function packageVersion(): string {
  const manifest = readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}

export interface DelivererParts {
  endpoints: WebhookEndpointsRepository;
  /** Its batches on connections of their own ({@link DELIVERY_SESSION_SETTINGS}). */
  deliveries: WebhookDeliveriesRepository;
  settings: WebhooksSettings;
  resolver: WebhookResolver;
  secrets: SecretBox;
  messages: WebhookMessages;
  metrics: MetricsService;
  logger: PinoLogger;
  /** The process's pg-boss. */
  queue: JobQueue;
  /** Whether this process makes attempts (a worker); else it only queues them. */
  delivers: boolean;
}

/**
 * The sessions of the deliverer's bookkeeping (pg-boss's fetches and completions, the batches'
 * claims, bodies and successes) commit without waiting for their log flush. A crash of PostgreSQL
 * may lose the last of them: a claim, a job's completion or a success then never happened, and
 * the delivery is attempted again (at least once, same `webhook-id`). The deliveries and their
 * first jobs are written by the fan-out's transaction, which keeps waiting for its flush.
 */
export const DELIVERY_SESSION_SETTINGS = { synchronous_commit: 'off' } as const;

/** The batches' connections: the claims and the successes of the chunks under way. */
export const DELIVERY_POOL_SIZE = 2;

/**
 * How long a claim outlasts the attempt's timeout: enough for its outcome to be recorded on a
 * machine that stalls for seconds (another claim before that would send the message twice), short
 * enough that an attempt cut off by a crash is made again within a minute after its timeout.
 */
const LEASE_MARGIN_MS = 30_000;

/** How often an idle worker looks for jobs, in seconds: pg-boss's least. */
const POLL_SECONDS = 0.5;

/**
 * pg-boss's loops fetching attempts: each fetches `WEBHOOK_CONCURRENCY` jobs, so that the next
 * ones are at hand as slots free; a job waits for a slot at most as long as the attempts of the
 * loops before it can take.
 */
const FETCHING_LOOPS = 2;

/**
 * How often a loop tells pg-boss its jobs are alive, in seconds, and after how long without a
 * word pg-boss takes them for cut off (their process died) and runs them again: whatever the
 * attempts' timeout, a crashed worker's jobs wait no longer than this and pg-boss's next
 * supervision.
 */
const HEARTBEAT_SECONDS = 10;
const HEARTBEAT_REFRESH_SECONDS = 4;

/**
 * The `WEBHOOK_CONCURRENCY` attempts an instance may make at once. Attempts start in chunks: a
 * chunk takes as many slots as are free, at least one, and gives each back as its attempt ends.
 * Slots given back in one turn of the event loop go to the next chunk together, so that its
 * claim is one statement for all of them.
 */
class Slots {
  private readonly waiting: (() => void)[] = [];

  constructor(private free: number) {}

  /** Up to `wanted` slots, at least one: waits while none is free. */
  async take(wanted: number): Promise<number> {
    while (this.free === 0) await new Promise<void>((wake) => this.waiting.push(wake));
    const taken = Math.min(wanted, this.free);
    this.free -= taken;
    // Slots left over go to the next chunk waiting.
    if (this.free > 0) this.waiting.shift()?.();
    return taken;
  }

  give(count = 1): void {
    this.free += count;
    const next = this.waiting.shift();
    if (next !== undefined) setImmediate(next);
  }
}

/**
 * The successful attempts, recorded together: one statement at a time (DELIVERED), taking every
 * attempt that ended while the one before ran.
 */
class Successes {
  private waiting: { id: string; status: number; done: (error?: Error) => void }[] = [];
  private writing = false;

  constructor(private readonly deliveries: WebhookDeliveriesRepository) {}

  /** Records the delivery `id` delivered with `status`: settles once written. */
  async record(id: string, status: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.waiting.push({ id, status, done: (error) => (error ? reject(error) : resolve()) });
      if (!this.writing) void this.write();
    });
  }

  private async write(): Promise<void> {
    this.writing = true;
    // Those ending in the same turn of the event loop go together.
    await new Promise((next) => setImmediate(next));
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      try {
        await this.deliveries.delivered(batch);
        for (const success of batch) success.done();
      } catch (error) {
        for (const success of batch) success.done(error as Error);
      }
    }
    this.writing = false;
  }
}

/**
 * The attempts of this instance: pg-boss loops on the delivery queue fetch its jobs, and at most
 * `WEBHOOK_CONCURRENCY` attempts run at once ({@link Slots}), each starting as a slot frees.
 * pg-boss fetches each job for one loop of one instance (`SKIP LOCKED`); the delivery's lease
 * keeps a delivery to one attempt at a time; a failed attempt schedules the next as a new job at
 * the time the retry schedule says, in the transaction that records it.
 */
export class WebhookDeliverer {
  private boss: PgBoss | undefined;
  private readonly userAgent = `store-orders-webhooks/${packageVersion()}`;
  private readonly results: Counter<'result'>;
  private readonly duration: Histogram;
  private readonly slots: Slots;
  private readonly successes: Successes;

  constructor(private readonly parts: DelivererParts) {
    this.slots = new Slots(parts.settings.WEBHOOK_CONCURRENCY);
    this.successes = new Successes(parts.deliveries);
    const registry = parts.metrics.registry;
    this.results = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook attempts by what came of them: delivered, retried (a failed attempt with another to come) or failed (the last)',
      labelNames: ['result'] as const,
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Time of one webhook attempt, from its start to the answer or the error',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    let pending: Promise<{ pending: number; oldest: number }> | undefined;
    let last = { pending: 0, oldest: 0 };
    // Both gauges from one query per scrape. With the database unreachable, the last values read:
    // a scrape must still answer, for the readiness and outage metrics above all.
    const read = () => {
      const mark = parts.queue.mark();
      pending ??= parts.deliveries
        .pendingSummary()
        .then((summary) => {
          parts.queue.answered(mark);
          return (last = summary);
        })
        .catch(() => last)
        .finally(() => setTimeout(() => (pending = undefined), 100));
      return pending;
    };
    new Gauge({
      name: 'webhook_pending_deliveries',
      help: 'Webhook deliveries not yet delivered nor failed',
      registers: [registry],
      async collect() {
        this.set(parts.deliveries.available ? (await read()).pending : 0);
      },
    });
    new Gauge({
      name: 'webhook_oldest_pending_delivery_age_seconds',
      help: 'Age of the oldest pending webhook delivery (0: none)',
      registers: [registry],
      async collect() {
        this.set(parts.deliveries.available ? (await read()).oldest : 0);
      },
    });
  }

  async start(): Promise<void> {
    const { settings } = this.parts;
    if (!this.parts.delivers) return;
    const boss = await this.parts.queue.started();
    this.boss = boss;
    // A job not done this long after its fetch hangs: pg-boss runs it again. Its loop's heartbeat
    // tells a job waiting for a slot from one whose process died.
    // A new job wakes the loops at its commit (NOTIFY), not at their next poll.
    await boss.updateQueue(DELIVERY_QUEUE, {
      expireInSeconds: FETCHING_LOOPS * Math.ceil(settings.WEBHOOK_TIMEOUT_MS / 1000) + 30,
      heartbeatSeconds: HEARTBEAT_SECONDS,
      notify: true,
    });
    await boss.work<{ deliveryId: string }>(
      DELIVERY_QUEUE,
      {
        batchSize: settings.WEBHOOK_CONCURRENCY,
        localConcurrency: FETCHING_LOOPS,
        heartbeatRefreshSeconds: HEARTBEAT_REFRESH_SECONDS,
        pollingIntervalSeconds: POLL_SECONDS,
        notifyPollingIntervalSeconds: NOTIFIED_POLL_SECONDS,
        // With a backlog (a full batch), the next batch is fetched as soon as this one is done.
        burstWhenBatchFull: true,
      },
      async (jobs) => {
        // The jobs' fetch may have been answered just before an outage that is already reported:
        // the attempts' own queries (claims, outcomes) tell whether the database answers now.
        const mark = this.parts.queue.mark();
        await this.attempt(jobs.map((job) => job.data.deliveryId));
        this.parts.queue.answered(mark);
      },
    );
  }

  async stop(): Promise<void> {
    const boss = this.boss;
    this.boss = undefined;
    await boss?.offWork(DELIVERY_QUEUE, { wait: true });
  }

  /**
   * One attempt of each delivery of `deliveryIds` that is due and has no other attempt running,
   * in chunks as slots free: each chunk claimed (and its first bodies written) in one statement;
   * successes recorded together as they end ({@link Successes}), a failed attempt (with what
   * follows) on its own.
   */
  async attempt(deliveryIds: readonly string[]): Promise<void> {
    const ids = [...new Set(deliveryIds)];
    const chunks: Promise<void>[] = [];
    for (let next = 0; next < ids.length;) {
      const taken = await this.slots.take(ids.length - next);
      chunks.push(this.attemptChunk(ids.slice(next, next + taken)));
      next += taken;
    }
    // Every chunk ends before the jobs are settled, whichever failed.
    const failed = (await Promise.allSettled(chunks)).find((chunk) => chunk.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  /** The attempts of `ids`, one slot each, taken by the caller and given back here. */
  private async attemptChunk(ids: readonly string[]): Promise<void> {
    let held = ids.length;
    let claimed: ClaimedDelivery[];
    let bodies: Map<string, string>;
    try {
      const lease = this.parts.settings.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS;
      claimed = await this.parts.deliveries.claim(ids, lease);
      this.slots.give(held - claimed.length);
      held = claimed.length;
      const claimedIds = new Set(claimed.map((delivery) => delivery.id));
      for (const id of ids) if (!claimedIds.has(id)) await this.unclaimed(id);
      bodies = await this.firstBodies(claimed);
    } catch (error) {
      this.slots.give(held);
      throw error;
    }
    await Promise.all(
      claimed.map(async (delivery) => {
        // The slot is held until the attempt is recorded: a worker killed leaves at most
        // WEBHOOK_CONCURRENCY attempts made and not recorded, to be made again.
        try {
          const started = process.hrtime.bigint();
          let result: AttemptResult;
          try {
            result = await this.send(delivery, bodies.get(delivery.id));
          } catch (error) {
            result = { ok: false, error: (error as Error).message };
          }
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          this.duration.observe(seconds);
          let outcome: 'delivered' | 'retried' | 'failed' = 'delivered';
          if (result.ok) await this.successes.record(delivery.id, result.status);
          else outcome = await this.record(delivery, result);
          this.logAttempt(delivery, result.status ?? null, outcome, seconds);
        } finally {
          this.slots.give();
        }
      }),
    );
  }

  /** The attempt's metric and its log line. */
  private logAttempt(
    delivery: ClaimedDelivery,
    status: number | null,
    outcome: 'delivered' | 'retried' | 'failed',
    seconds: number,
  ): void {
    this.results.inc({ result: outcome });
    this.parts.logger.info(
      {
        endpointId: delivery.endpoint_id,
        eventId: delivery.webhook_id,
        deliveryId: delivery.id,
        attempt: delivery.attempts,
        status,
        result: outcome,
        durationMs: Math.round(seconds * 1000),
      },
      'webhook attempt',
    );
  }

  /**
   * The bodies of the deliveries among `claimed` that have none yet (queued before the fan-out
   * made them), written before any is sent: every later attempt sends the same. A delivery whose
   * event is gone has none (its attempt fails).
   */
  private async firstBodies(claimed: readonly ClaimedDelivery[]): Promise<Map<string, string>> {
    const first = claimed.filter(
      (d): d is ClaimedDelivery & { actor: string; target: string; at: Date } =>
        d.body === null && d.at !== null && d.actor !== null && d.target !== null,
    );
    const bodies = new Map<string, string>();
    if (first.length === 0) return bodies;
    const texts = await this.parts.messages.bodiesOf(first);
    first.forEach((d, i) => bodies.set(d.id, texts[i]));
    await this.parts.deliveries.writeBodies(bodies);
    return bodies;
  }

  /**
   * A job that found its delivery leased (an attempt under way, or cut off) comes back when the
   * lease ends; one for a disabled or removed endpoint ends the delivery. Any other (delivered,
   * failed, or not due: a newer job is scheduled) has nothing to do.
   */
  private async unclaimed(deliveryId: string): Promise<void> {
    const row = await this.parts.deliveries.unclaimed(deliveryId);
    if (row?.status !== 'pending') return;
    if (row.endpoint_off) {
      await this.parts.deliveries.failForEndpointOff(deliveryId);
    } else if (row.leased) {
      await this.boss?.send(
        DELIVERY_QUEUE,
        { deliveryId },
        { startAfter: new Date(row.lease_until.getTime() + 1000) },
      );
    }
  }

  private async send(
    delivery: ClaimedDelivery,
    firstBody: string | undefined,
  ): Promise<AttemptResult> {
    const { secrets, settings } = this.parts;
    const body = delivery.body ?? firstBody;
    if (body === undefined) {
      throw new Error(
        delivery.event_id === null
          ? 'the delivery has no body'
          : `audit event ${delivery.event_id} not found`,
      );
    }
    const signing = [delivery.secret, delivery.previous_secret]
      .filter((secret): secret is string => secret !== null)
      .map((stored) => secrets.open(stored));
    const timestamp = Math.floor(Date.now() / 1000);
    return await sendAttempt(
      {
        url: delivery.url,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': this.userAgent,
          'webhook-id': delivery.webhook_id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(signing, delivery.webhook_id, timestamp, body),
        },
      },
      {
        resolver: this.parts.resolver,
        timeoutMs: settings.WEBHOOK_TIMEOUT_MS,
        allowPrivate: settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS === 'true',
        allowHttp: settings.WEBHOOK_ALLOW_HTTP === 'true',
      },
    );
  }

  /**
   * The wait before attempt n + 1 after n failed ones, ±10 %; undefined after the last. A
   * receiver's `Retry-After` (on a 429) is honoured within the schedule's bounds: never sooner than
   * the schedule's own wait, never later than its longest.
   */
  private retryDelayMs(attempts: number, retryAfterSeconds?: number): number | undefined {
    const schedule = this.parts.settings.WEBHOOK_RETRY_SECONDS;
    if (attempts > schedule.length) return undefined;
    const scheduled = Math.round(schedule[attempts - 1] * 1000 * (0.9 + Math.random() * 0.2));
    if (retryAfterSeconds === undefined) return scheduled;
    return Math.min(Math.max(scheduled, retryAfterSeconds * 1000), Math.max(...schedule) * 1000);
  }

  /**
   * Records a failed attempt, and what follows from it, in one transaction (a batch's delivered
   * attempts are recorded together, by DELIVERED).
   */
  private async record(
    delivery: ClaimedDelivery,
    result: AttemptResult,
  ): Promise<'retried' | 'failed'> {
    const statusCode = result.status ?? null;
    const error = (
      'error' in result ? result.error : `HTTP ${result.status}: ${result.answer}`
    ).slice(0, KEPT_ANSWER_BYTES);
    const { deliveries, endpoints } = this.parts;
    return await deliveries.transaction(async (manager) => {
      if (statusCode === 410) {
        await deliveries.failed(manager, delivery.id, statusCode, error);
        await this.disable(manager, delivery.endpoint_id, 'gone');
        return 'failed';
      }
      const failingLong = await endpoints.markFailing(
        manager,
        delivery.endpoint_id,
        this.parts.settings.WEBHOOK_DISABLE_AFTER_HOURS,
      );
      const wait = this.retryDelayMs(
        delivery.attempts,
        'retryAfterSeconds' in result ? result.retryAfterSeconds : undefined,
      );
      if (wait === undefined || failingLong) {
        await deliveries.failed(manager, delivery.id, statusCode, error);
        if (failingLong) await this.disable(manager, delivery.endpoint_id, 'failing');
        return 'failed';
      }
      const next = await deliveries.retryLater(manager, delivery.id, statusCode, error, wait);
      await queueAttempt(await this.parts.queue.started(), manager, delivery.id, next);
      return 'retried';
    });
  }

  private async disable(manager: EntityManager, endpointId: string, reason: string): Promise<void> {
    await this.parts.endpoints.disable(manager, endpointId, reason);
    await this.parts.deliveries.failPending(
      manager,
      endpointId,
      `the endpoint is disabled (${reason})`,
    );
  }
}
