import type { PinoLogger } from 'nestjs-pino';
import type { Job, JobResult, PgBoss } from 'pg-boss';
import { Counter, Gauge } from 'prom-client';
import type { MetricsService } from '../metrics/metrics.service';
import type { Consumer, RelayedEvent } from './event-consumer';
import { NOTIFIED_POLL_SECONDS } from './job-queue';

/**
 * How long a consumer's run may take before it counts as cut off (its process died) and is run
 * again: a run takes milliseconds, and what a killed worker held waits no longer than this (and
 * pg-boss's next supervision) for another; a consumer gets the event's id to be idempotent.
 */
const RUN_EXPIRES_SECONDS = 60;

/** How often an idle worker looks for jobs, in seconds (pg-boss's least). */
const POLL_SECONDS = 0.5;

/** What the gauges show of one consumer's queue. */
interface Backlog {
  pending: number;
  oldest: number;
}

/**
 * The consumers' runs in a worker process: each consumer's queue worked by pg-boss, a job per
 * event, at most its `concurrency` at once (two loops, each a batch of jobs fetched together); a run that throws is retried by pg-boss with backoff
 * (the consumer's `retryLimit` and `retryDelaySeconds`), counted in its failures.
 */
export class EventWorkers {
  private readonly failures: Counter<'consumer'>;
  private boss: PgBoss | undefined;
  private consumers: readonly Consumer[] = [];

  constructor(
    metrics: MetricsService,
    private readonly logger: PinoLogger,
  ) {
    const registry = metrics.registry;
    this.failures = new Counter({
      name: 'event_consumer_failures_total',
      help: 'Runs of an event consumer that threw (each is retried with backoff until its limit)',
      labelNames: ['consumer'] as const,
      registers: [registry],
    });
    // Both gauges from one read of the queues per scrape.
    let reading: Promise<Map<string, Backlog>> | undefined;
    const read = () => {
      reading ??= this.backlogs().finally(() => setTimeout(() => (reading = undefined), 100));
      return reading;
    };
    const gauge = (name: string, help: string, pick: (b: Backlog) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['consumer'] as const,
        registers: [registry],
        async collect() {
          for (const [consumer, backlog] of await read()) this.set({ consumer }, pick(backlog));
        },
      });
    gauge(
      'event_consumer_pending_events',
      'Events relayed to a consumer and not yet consumed (waiting, retrying or running)',
      (b) => b.pending,
    );
    gauge(
      'event_consumer_oldest_pending_age_seconds',
      'Age of the oldest event waiting for a consumer (0: none)',
      (b) => b.oldest,
    );
  }

  /** Each consumer's backlog, read through pg-boss; the last one known when that fails. */
  private async backlogs(): Promise<Map<string, Backlog>> {
    const backlogs = new Map<string, Backlog>();
    const boss = this.boss;
    if (boss === undefined) return backlogs;
    for (const consumer of this.consumers) {
      try {
        const queue = await boss.getQueue(consumer.queue);
        const oldest = (await boss.findJobs(consumer.queue, { queued: true, limit: 1 })).at(0);
        backlogs.set(consumer.options.name, {
          pending: (queue?.queuedCount ?? 0) + (queue?.activeCount ?? 0),
          oldest: oldest === undefined ? 0 : (Date.now() - oldest.createdOn.getTime()) / 1000,
        });
      } catch {
        // The database away: this scrape leaves the consumer out.
      }
    }
    return backlogs;
  }

  /** Creates each consumer's queue (if new) and works it. */
  async start(boss: PgBoss, consumers: readonly Consumer[]): Promise<void> {
    this.boss = boss;
    this.consumers = consumers;
    for (const consumer of consumers) {
      const { retryLimit, retryDelaySeconds, concurrency } = consumer.options;
      const options = {
        retryLimit,
        retryDelay: retryDelaySeconds,
        retryBackoff: true,
        expireInSeconds: RUN_EXPIRES_SECONDS,
        // The relay's jobs wake the workers at its commit.
        notify: true,
      };
      await boss.createQueue(consumer.queue, options);
      await boss.updateQueue(consumer.queue, options);
      // Two loops, each fetching a batch and running its events at once, each settled alone (or
      // all of them together, in one statement, by a consumer that takes a batch).
      const work = {
        batchSize: Math.max(1, Math.ceil(concurrency / 2)),
        localConcurrency: concurrency > 1 ? 2 : 1,
        pollingIntervalSeconds: POLL_SECONDS,
        notifyPollingIntervalSeconds: NOTIFIED_POLL_SECONDS,
        burstWhenBatchFull: true,
      };
      if (consumer.instance.consumeBatch === undefined) {
        await boss.work<RelayedEvent>(
          consumer.queue,
          { ...work, perJobResults: true },
          async (jobs) => await Promise.all(jobs.map((job) => this.run(consumer, job))),
        );
      } else {
        await boss.work<RelayedEvent>(consumer.queue, work, async (jobs) => {
          await this.runBatch(consumer, jobs);
        });
      }
    }
  }

  /**
   * One run of a consumer over a batch: pg-boss completes every job when it returns, and fails
   * every one (each retried later) when it throws, counted here.
   */
  private async runBatch(consumer: Consumer, jobs: Job<RelayedEvent>[]): Promise<void> {
    try {
      await consumer.instance.consumeBatch?.(jobs.map((job) => job.data));
    } catch (error) {
      const name = consumer.options.name;
      this.failures.inc({ consumer: name }, jobs.length);
      this.logger.warn(
        { consumer: name, eventIds: jobs.map((job) => job.data.id), err: error },
        'event consumer failed on a batch; each of its events runs again later',
      );
      throw error;
    }
  }

  /** One run of a consumer: completed, or failed (pg-boss retries it later) and counted. */
  private async run(consumer: Consumer, job: Job<RelayedEvent>): Promise<JobResult> {
    try {
      await consumer.instance.consume(job.data);
      return { id: job.id, status: 'completed' };
    } catch (error) {
      const name = consumer.options.name;
      this.failures.inc({ consumer: name });
      this.logger.warn(
        { consumer: name, eventId: job.data.id, run: job.retryCount + 1, err: error },
        'event consumer failed; it runs again later',
      );
      return { id: job.id, status: 'failed', output: { message: (error as Error).message } };
    }
  }

  /** Stops taking jobs; the runs under way end (pg-boss's stop waits for them). */
  async stop(): Promise<void> {
    const boss = this.boss;
    this.boss = undefined;
    for (const consumer of this.consumers) await boss?.offWork(consumer.queue);
  }
}
