import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PinoLogger } from 'nestjs-pino';
import type { PgBoss } from 'pg-boss';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { DataSource, EntityManager } from 'typeorm';
import type { MetricsService } from '../metrics/metrics.service';
import type { WebhookResolver } from './webhook-addresses';
import type { WebhookMessages } from './webhook-messages';
import { DELIVERY_QUEUE, QUEUE_SCHEMA } from './webhook-queue';
import { type SecretBox, signatureHeader } from './webhook-secrets';
import { type AttemptResult, KEPT_ANSWER_BYTES, sendAttempt } from './webhook-sender';
import { returnedRows } from './webhook-json';
import { FAIL_PENDING_SQL } from './webhooks.service';
import type { WebhooksSettings } from './webhooks.settings';

/** This package's version, for the messages' User-Agent (package.json two folders up). */
function packageVersion(): string {
  const manifest = readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}

/** What a claimed delivery carries into its attempt. */
interface Claimed {
  id: string;
  endpoint_id: string;
  event_id: string | null;
  webhook_id: string;
  type: string;
  body: string | null;
  attempts: number;
  url: string;
  secret: string;
  previous_secret: string | null;
}

/**
 * Claims a pending delivery that is due, for one attempt: a lease as long as the attempt may
 * take, so that however many jobs name it, one attempt runs at a time. An attempt cut off by a
 * crash leaves its lease, which ends before pg-boss expires its job and tries the job again.
 */
const CLAIM_SQL = `
  UPDATE webhook_deliveries d
     SET lease_until = now() + $2 * interval '1 millisecond', attempts = d.attempts + 1,
         last_attempt_at = now()
    FROM webhook_endpoints e
   WHERE d.id = $1 AND e.id = d.endpoint_id AND d.status = 'pending'
     AND e.disabled_at IS NULL AND e.removed_at IS NULL
     AND (d.lease_until IS NULL OR d.lease_until < now())
     AND d.next_attempt_at <= now() + interval '1 second'
  RETURNING d.id, d.endpoint_id, d.event_id, d.webhook_id, d.type, d.body, d.attempts, e.url,
            e.secret, CASE WHEN e.previous_secret_until > now() THEN e.previous_secret END
              AS previous_secret`;

/** Why a job found nothing to attempt. */
const UNCLAIMED_SQL = `
  SELECT d.status, d.lease_until > now() AS leased, d.lease_until,
         e.disabled_at IS NOT NULL OR e.removed_at IS NOT NULL AS endpoint_off
    FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
   WHERE d.id = $1`;

const ATTEMPT_OUTCOME_SQL = `
  UPDATE webhook_deliveries
     SET status = $2, last_status_code = $3, last_error = $4, lease_until = NULL,
         delivered_at = CASE WHEN $2 = 'delivered' THEN now() END,
         next_attempt_at = CASE WHEN $2 = 'pending' THEN now() + $5 * interval '1 millisecond' END
   WHERE id = $1
  RETURNING next_attempt_at`;

/** Pending deliveries, and the age of the oldest, for the gauges. */
const PENDING_SQL = `
  SELECT count(*)::int AS pending,
         COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest
    FROM webhook_deliveries WHERE status = 'pending'`;

export interface DelivererParts {
  db: DataSource;
  settings: WebhooksSettings;
  resolver: WebhookResolver;
  secrets: SecretBox;
  messages: WebhookMessages;
  metrics: MetricsService;
  logger: PinoLogger;
  databaseUrl: string;
}

/** How often pg-boss looks for attempts whose process died (expired jobs), in seconds. */
const SUPERVISE_SECONDS = 10;

/**
 * The attempts of this instance: a pg-boss worker on the delivery queue, at most
 * `WEBHOOK_CONCURRENCY` attempts at once. pg-boss fetches each job for one worker of one instance
 * (`SKIP LOCKED`); the delivery's lease keeps a delivery to one attempt at a time; a failed
 * attempt schedules the next as a new job at the time the retry schedule says, in the
 * transaction that records it.
 */
export class WebhookDeliverer {
  private boss: PgBoss | undefined;
  private readonly userAgent = `store-orders-webhooks/${packageVersion()}`;
  private readonly results: Counter<'result'>;
  private readonly duration: Histogram;

  constructor(private readonly parts: DelivererParts) {
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
      pending ??= parts.db
        .query(PENDING_SQL)
        .then((rows: { pending: number; oldest: number }[]) => (last = rows[0]))
        .catch(() => last)
        .finally(() => setTimeout(() => (pending = undefined), 100));
      return pending;
    };
    new Gauge({
      name: 'webhook_pending_deliveries',
      help: 'Webhook deliveries not yet delivered nor failed',
      registers: [registry],
      async collect() {
        this.set(parts.db.isInitialized ? (await read()).pending : 0);
      },
    });
    new Gauge({
      name: 'webhook_oldest_pending_delivery_age_seconds',
      help: 'Age of the oldest pending webhook delivery (0: none)',
      registers: [registry],
      async collect() {
        this.set(parts.db.isInitialized ? (await read()).oldest : 0);
      },
    });
  }

  async start(): Promise<void> {
    const { settings } = this.parts;
    if (settings.WEBHOOK_DELIVERY === 'off') return;
    const { PgBoss } = await import('pg-boss');
    const boss = new PgBoss({
      connectionString: this.parts.databaseUrl,
      schema: QUEUE_SCHEMA,
      application_name: 'store-orders-webhooks',
      max: 2 + Math.ceil(settings.WEBHOOK_CONCURRENCY / 5),
      migrate: false,
      createSchema: false,
      schedule: false,
      supervise: true,
      superviseIntervalSeconds: SUPERVISE_SECONDS,
      // The queue's backlog, read for the workers' burst mode below, is this fresh.
      queueCacheIntervalSeconds: SUPERVISE_SECONDS,
      monitorIntervalSeconds: SUPERVISE_SECONDS,
    });
    boss.on('error', (error: unknown) => {
      this.parts.logger.error({ err: error }, 'webhook queue error');
    });
    await boss.start();
    this.boss = boss;
    // A job whose attempt outlives the timeout by this much was cut off (its process died).
    await boss.updateQueue(DELIVERY_QUEUE, {
      expireInSeconds: Math.ceil(settings.WEBHOOK_TIMEOUT_MS / 1000) + 5,
    });
    await boss.work<{ deliveryId: string }>(
      DELIVERY_QUEUE,
      {
        batchSize: 1,
        localConcurrency: settings.WEBHOOK_CONCURRENCY,
        pollingIntervalSeconds: 1,
        // With a backlog, each worker fetches its next job as soon as it is free, not a poll later.
        burstWhenReadyExceeds: 1,
      },
      async (jobs) => {
        for (const job of jobs) await this.attempt(job.data.deliveryId);
      },
    );
  }

  async stop(): Promise<void> {
    const boss = this.boss;
    this.boss = undefined;
    await boss?.stop({ graceful: true, timeout: this.parts.settings.WEBHOOK_TIMEOUT_MS + 1000 });
  }

  /** One attempt of a delivery, if it is due and no other attempt of it runs. */
  async attempt(deliveryId: string): Promise<void> {
    const { db, settings } = this.parts;
    const lease = settings.WEBHOOK_TIMEOUT_MS + 2000;
    const claimed = returnedRows<Claimed>(await db.query(CLAIM_SQL, [deliveryId, lease]));
    if (claimed.length === 0) {
      await this.unclaimed(deliveryId);
      return;
    }
    const delivery = claimed[0];
    const started = process.hrtime.bigint();
    let result: AttemptResult;
    try {
      result = await this.send(delivery);
    } catch (error) {
      result = { ok: false, error: (error as Error).message };
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.duration.observe(seconds);
    const outcome = await this.record(delivery, result);
    this.results.inc({ result: outcome });
    this.parts.logger.info(
      {
        endpointId: delivery.endpoint_id,
        eventId: delivery.webhook_id,
        deliveryId: delivery.id,
        attempt: delivery.attempts,
        status: result.status ?? null,
        result: outcome,
        durationMs: Math.round(seconds * 1000),
      },
      'webhook attempt',
    );
  }

  /**
   * A job that found its delivery leased (an attempt under way, or cut off) comes back when the
   * lease ends; one for a disabled or removed endpoint ends the delivery. Any other (delivered,
   * failed, or not due: a newer job is scheduled) has nothing to do.
   */
  private async unclaimed(deliveryId: string): Promise<void> {
    const rows: { status: string; leased: boolean; lease_until: Date; endpoint_off: boolean }[] =
      await this.parts.db.query(UNCLAIMED_SQL, [deliveryId]);
    if (rows.length === 0 || rows[0].status !== 'pending') return;
    const [row] = rows;
    if (row.endpoint_off) {
      await this.parts.db.query(
        `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL,
                last_error = COALESCE(last_error, 'the endpoint is disabled')
          WHERE id = $1 AND status = 'pending'`,
        [deliveryId],
      );
    } else if (row.leased) {
      await this.parts.db.query(
        `SELECT webhook_enqueue($1, $2::timestamptz + interval '1 second')`,
        [deliveryId, row.lease_until],
      );
    }
  }

  private async send(delivery: Claimed): Promise<AttemptResult> {
    const { secrets, settings, messages, db } = this.parts;
    let body = delivery.body;
    if (body === null) {
      if (delivery.event_id === null) throw new Error('the delivery has no body');
      body = await messages.bodyOf(delivery.event_id, delivery.type);
      // The first attempt fixes the body: every later one sends the same.
      await db.query('UPDATE webhook_deliveries SET body = $2 WHERE id = $1', [delivery.id, body]);
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
      },
    );
  }

  /** The wait before attempt n + 1 after n failed ones, ±10 %; undefined after the last. */
  private retryDelayMs(attempts: number): number | undefined {
    const schedule = this.parts.settings.WEBHOOK_RETRY_SECONDS;
    if (attempts > schedule.length) return undefined;
    const seconds = schedule[attempts - 1];
    return Math.round(seconds * 1000 * (0.9 + Math.random() * 0.2));
  }

  /** Records an attempt, and what follows from it, in one transaction. */
  private async record(
    delivery: Claimed,
    result: AttemptResult,
  ): Promise<'delivered' | 'retried' | 'failed'> {
    const statusCode = result.status ?? null;
    const error = result.ok
      ? null
      : ('error' in result ? result.error : `HTTP ${result.status}: ${result.answer}`).slice(
          0,
          KEPT_ANSWER_BYTES,
        );
    if (result.ok) {
      // One statement; the endpoint's row is written (and locked) only when it was failing, so
      // that the attempts to one endpoint never wait for each other.
      await this.parts.db.query(
        `WITH delivered AS (${ATTEMPT_OUTCOME_SQL})
         UPDATE webhook_endpoints SET failing_since = NULL
          WHERE id = $6 AND failing_since IS NOT NULL`,
        [delivery.id, 'delivered', statusCode, null, null, delivery.endpoint_id],
      );
      return 'delivered';
    }
    return await this.parts.db.transaction(async (manager) => {
      if (statusCode === 410) {
        await manager.query(ATTEMPT_OUTCOME_SQL, [delivery.id, 'failed', statusCode, error, null]);
        await this.disable(manager, delivery.endpoint_id, 'gone');
        return 'failed';
      }
      const failing = returnedRows<{ long: boolean }>(
        await manager.query(
          `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, now())
          WHERE id = $1
          RETURNING failing_since < now() - $2 * interval '1 hour' AS long`,
          [delivery.endpoint_id, this.parts.settings.WEBHOOK_DISABLE_AFTER_HOURS],
        ),
      );
      const wait = this.retryDelayMs(delivery.attempts);
      const failingLong = failing.length > 0 && failing[0].long;
      if (wait === undefined || failingLong) {
        await manager.query(ATTEMPT_OUTCOME_SQL, [delivery.id, 'failed', statusCode, error, null]);
        if (failingLong) await this.disable(manager, delivery.endpoint_id, 'failing');
        return 'failed';
      }
      const next = returnedRows<{ next_attempt_at: Date }>(
        await manager.query(ATTEMPT_OUTCOME_SQL, [delivery.id, 'pending', statusCode, error, wait]),
      );
      await manager.query('SELECT webhook_enqueue($1, $2)', [delivery.id, next[0].next_attempt_at]);
      return 'retried';
    });
  }

  private async disable(manager: EntityManager, endpointId: string, reason: string): Promise<void> {
    await manager.query(
      `UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2
        WHERE id = $1 AND disabled_at IS NULL`,
      [endpointId, reason],
    );
    await manager.query(FAIL_PENDING_SQL, [endpointId, `the endpoint is disabled (${reason})`]);
  }
}
