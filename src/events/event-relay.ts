import type { PinoLogger } from 'nestjs-pino';
import type { PgBoss } from 'pg-boss';
import { Counter } from 'prom-client';
import { auditEventJson } from '../audit/audit-event';
import { jobsOnConnection } from '../database/job-queue-db';
import type { StatementConnection } from '../database/statement-pool';
import type { MetricsService } from '../metrics/metrics.service';
import type { Consumer, RelayedEvent } from './event-consumer';
import type { EventRelayRepository, EventRow } from './event-relay.repository';

/** Events relayed by one transaction, at most. */
export const RELAY_BATCH = 1000;

/** Longest one statement of the relay may run, in ms: a batch is a few short statements. */
export const RELAY_STATEMENT_TIMEOUT_MS = 30_000;

/** How often an idle relay looks for new events, in ms. */
const RELAY_POLL_MS = 200;

/** How long a relay waits after a failure (the database away), in ms. */
const RELAY_BACKOFF_MS = 2000;

function relayedEvent(row: EventRow): RelayedEvent {
  return auditEventJson({ ...row, requestId: row.request_id });
}

/**
 * The relay: moves committed audit events to their consumers, one job per event and consumer,
 * in the transaction that advances its cursor, so a relay stopped anywhere has relayed a batch
 * whole or not at all. Any number of processes run one; an advisory lock lets one relay at a
 * time.
 */
export class EventRelay {
  private running: Promise<void> | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;
  private readonly relayed: Counter;

  constructor(
    private readonly events: EventRelayRepository,
    metrics: MetricsService,
    private readonly logger: PinoLogger,
  ) {
    this.relayed = new Counter({
      name: 'event_relay_events_total',
      help: 'Committed audit events this process relayed to their consumers (each event is relayed by one process once)',
      registers: [metrics.registry],
    });
  }

  /** Relays one batch, if this process holds the cursor; answers how many events it relayed. */
  async relayOnce(boss: PgBoss, consumers: readonly Consumer[]): Promise<number> {
    const relayed = await this.events.transaction((tx) => this.relayBatch(tx, boss, consumers));
    this.relayed.inc(relayed);
    return relayed;
  }

  /** One batch, in the caller's transaction: the jobs and the cursor's move. */
  private async relayBatch(
    tx: StatementConnection,
    boss: PgBoss,
    consumers: readonly Consumer[],
  ): Promise<number> {
    if (!(await this.events.tryLock(tx))) return 0;
    const rows = await this.events.eventsAfter(tx, await this.events.cursor(tx), RELAY_BATCH);
    if (rows.length === 0) return 0;
    // pg-boss writes the jobs with this transaction's connection: they commit with the cursor.
    const db = jobsOnConnection(tx);
    for (const consumer of consumers) {
      const { retryLimit, retryDelaySeconds } = consumer.options;
      const jobs = rows
        .filter((row) => consumer.takes(row.action))
        .map((row) => ({
          data: relayedEvent(row),
          retryLimit,
          retryDelay: retryDelaySeconds,
          retryBackoff: true,
        }));
      if (jobs.length > 0) await boss.insert(consumer.queue, jobs, { db });
    }
    await this.events.advance(tx, rows[rows.length - 1]);
    return rows.length;
  }

  /** Relays until stopped: batch after batch while there are events, else every 200 ms. */
  start(boss: PgBoss, consumers: readonly Consumer[]): void {
    this.stopped = false;
    this.running = (async () => {
      let failing = false;
      while (!this.stopped) {
        let wait = RELAY_POLL_MS;
        try {
          if ((await this.relayOnce(boss, consumers)) === RELAY_BATCH) wait = 0;
          if (failing) this.logger.info('the event relay reaches the database again');
          failing = false;
        } catch (error) {
          // Said once an outage: every try fails while the database is away.
          if (!failing) this.logger.warn({ err: error }, 'the event relay failed; it tries again');
          failing = true;
          wait = RELAY_BACKOFF_MS;
        }
        if (wait > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, wait);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
    this.running = undefined;
  }
}
