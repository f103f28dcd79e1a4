import type { PinoLogger } from 'nestjs-pino';
import type { Pool } from 'pg';
import type { PgBoss } from 'pg-boss';
import { Counter } from 'prom-client';
import { auditEventJson } from '../audit/audit-event';
import type { MetricsService } from '../metrics/metrics.service';
import type { Consumer, RelayedEvent } from './event-consumer';

/** Events relayed by one transaction, at most. */
export const RELAY_BATCH = 1000;

/** Longest one statement of the relay may run, in ms: a batch is a few short statements. */
export const RELAY_STATEMENT_TIMEOUT_MS = 30_000;

/** How often an idle relay looks for new events, in ms. */
const RELAY_POLL_MS = 200;

/** How long a relay waits after a failure (the database away), in ms. */
const RELAY_BACKOFF_MS = 2000;

/**
 * The relay's lock, held to the end of its transaction: a relay that does not get it leaves the
 * batch to the one holding it. Two keys ("ev", "rs" in ASCII): apart from the one-key locks pg-boss
 * takes.
 */
const LOCK_SQL = 'SELECT pg_try_advisory_xact_lock(25974, 29299) AS locked';

/** The relay's cursor, read once the lock is held: as the last holder committed it. */
const CURSOR_SQL = `
  SELECT xid::text AS xid, event_id::text AS event_id FROM event_relay WHERE name = 'audit'`;

/**
 * The events after the cursor whose transaction ended before every one still running: committed
 * (or rolled back, and so not there), none to come with a smaller (xid, id). An event's id is
 * drawn before its transaction commits, so "ids after the cursor" would pass over one that
 * commits late; its transaction's id is older than the oldest running one only once it ended.
 * (Ordered by the columns, not by the text the statement answers.)
 */
const NEXT_EVENTS_SQL = `
  SELECT e.id::text AS id, e.xid::text AS xid, e.at, e.actor, e.action, e.target, e.request_id
    FROM audit_events e
   WHERE e.xid IS NOT NULL AND (e.xid, e.id) > ($1::xid8, $2::bigint)
     AND e.xid < pg_snapshot_xmin(pg_current_snapshot())
   ORDER BY e.xid, e.id
   LIMIT $3`;

const ADVANCE_SQL = `
  UPDATE event_relay SET xid = $1::xid8, event_id = $2::bigint, relayed_at = now()
   WHERE name = 'audit'`;

interface EventRow {
  id: string;
  xid: string;
  at: Date;
  actor: string;
  action: string;
  target: string;
  request_id: string | null;
}

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

  /**
   * `pool`: a connection of the relay's own, apart from the one the requests share, so that its
   * polling takes nothing from them.
   */
  constructor(
    private readonly pool: Pool,
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
    const client = await this.pool.connect();
    const query = async <T>(text: string, values?: unknown[]): Promise<T[]> =>
      (await client.query(text, values)).rows as T[];
    try {
      await client.query('BEGIN');
      const relayed = await this.relayBatch(query, boss, consumers);
      await client.query('COMMIT');
      client.release();
      this.relayed.inc(relayed);
      return relayed;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      // A connection that failed is not given back to the pool.
      client.release(error instanceof Error ? error : true);
      throw error;
    }
  }

  /** One batch, in the caller's transaction: the jobs and the cursor's move. */
  private async relayBatch(
    query: <T>(text: string, values?: unknown[]) => Promise<T[]>,
    boss: PgBoss,
    consumers: readonly Consumer[],
  ): Promise<number> {
    const [{ locked }] = await query<{ locked: boolean }>(LOCK_SQL);
    if (!locked) return 0;
    const cursor = await query<{ xid: string; event_id: string }>(CURSOR_SQL);
    const rows = await query<EventRow>(NEXT_EVENTS_SQL, [
      cursor[0].xid,
      cursor[0].event_id,
      RELAY_BATCH,
    ]);
    if (rows.length === 0) return 0;
    // pg-boss writes the jobs with this transaction's connection: they commit with the cursor.
    const db = {
      executeSql: async (text: string, values?: unknown[]) => ({ rows: await query(text, values) }),
    };
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
    const last = rows[rows.length - 1];
    await query(ADVANCE_SQL, [last.xid, last.id]);
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
