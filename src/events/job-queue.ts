import type { PinoLogger } from 'nestjs-pino';
import type { PgBoss } from 'pg-boss';
import { sessionOptions } from '../database/database-pools';

/**
 * pg-boss's schema, created by a migration (its construction plans): the service's runtime role
 * creates nothing in it, and nothing of the service reads or writes its tables but pg-boss.
 */
export const QUEUE_SCHEMA = 'pgboss';

/**
 * The sessions of pg-boss's bookkeeping (fetches, completions, retries) commit without waiting
 * for their log flush. A crash of PostgreSQL may lose the last of them: a job's completion then
 * never happened, and the job runs again (at least once). The jobs a relay or a consumer creates
 * are written by their own transaction, which keeps waiting for its flush.
 */
const QUEUE_SESSION_SETTINGS = { synchronous_commit: 'off' } as const;

/**
 * How often a worker looks for jobs on a queue whose new jobs notify it, in seconds: for a
 * notification lost (the listening connection dropped) and for jobs whose time comes (retries).
 */
export const NOTIFIED_POLL_SECONDS = 1;

/** How often pg-boss looks for jobs whose process died (expired ones), in seconds. */
const SUPERVISE_SECONDS = 10;

export interface JobQueueOptions {
  databaseUrl: string;
  /** Whether this process works jobs (and so supervises them): a worker. */
  works: boolean;
  logger: PinoLogger;
}

/**
 * The process's pg-boss: one instance, started once by whoever needs it first. An API process
 * uses it to send jobs; a worker also works them, and supervises the queues (expired jobs
 * retried, old ones deleted).
 */
export class JobQueue {
  private starting: Promise<PgBoss> | undefined;
  private boss: PgBoss | undefined;
  /** Whether the queue's last word was an error, until something shows the database is back. */
  private failing = false;
  /** The outages the queue has reported so far (see `mark`). */
  private outages = 0;

  constructor(private readonly options: JobQueueOptions) {}

  /** To hand to `answered` once a query started now has been answered. */
  mark(): number {
    return this.outages;
  }

  /**
   * A query of a user of the queue, started at `mark`, was answered: if the queue reported an
   * outage before that query started, and none since, the database is back (said once). A query
   * that started before the outage proves nothing: its answer may have been on its way as the
   * outage began.
   */
  answered(mark: number): void {
    if (!this.failing || mark !== this.outages) return;
    this.failing = false;
    this.options.logger.info('webhook queue reaches the database again');
  }

  /** The started instance. */
  async started(): Promise<PgBoss> {
    this.starting ??= this.start();
    return await this.starting;
  }

  private async start(): Promise<PgBoss> {
    const { PgBoss } = await import('pg-boss');
    const works = this.options.works;
    const boss = new PgBoss({
      connectionString: this.options.databaseUrl,
      schema: QUEUE_SCHEMA,
      application_name: works ? 'store-orders-worker' : 'store-orders-jobs',
      max: works ? 4 : 2,
      options: sessionOptions(QUEUE_SESSION_SETTINGS),
      migrate: false,
      createSchema: false,
      schedule: false,
      supervise: works,
      // A worker is woken by the NOTIFY of a new job on its queues (their `notify` option) instead
      // of waiting for its next poll; polling stays as the backstop.
      useListenNotify: works,
      superviseIntervalSeconds: SUPERVISE_SECONDS,
      queueCacheIntervalSeconds: SUPERVISE_SECONDS,
      monitorIntervalSeconds: SUPERVISE_SECONDS,
    });
    // pg-boss reports every failed poll while the database is away: one line an outage.
    boss.on('error', (error: unknown) => {
      if (this.failing) return;
      this.failing = true;
      this.outages++;
      this.options.logger.warn(
        { err: error },
        'webhook queue cannot reach the database: deliveries and consumers wait until it answers again',
      );
    });
    await boss.start();
    this.boss = boss;
    return boss;
  }

  /** Stops the workers (letting their jobs end, at most `timeoutMs`) and closes the pool. */
  async stop(timeoutMs: number): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    if (starting === undefined) return;
    await starting.catch(() => undefined);
    const boss = this.boss;
    this.boss = undefined;
    await boss?.stop({ graceful: true, timeout: timeoutMs });
  }
}
