import type { StatementConnection, StatementPool } from '../database/statement-pool';

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

/** Where the relay stands: the last event relayed, and its transaction's id. */
export interface RelayCursor {
  xid: string;
  event_id: string;
}

/** A committed audit event as the relay reads it. */
export interface EventRow {
  id: string;
  xid: string;
  at: Date;
  actor: string;
  action: string;
  target: string;
  request_id: string | null;
}

/**
 * The relay's cursor (`event_relay`) and the committed audit events after it, on a pool of the
 * relay's own (one connection), apart from the one the requests share, so that its polling takes
 * nothing from them. Its methods run in the transaction {@link transaction} gives.
 */
export class EventRelayRepository {
  constructor(private readonly pool: StatementPool) {}

  /** Runs `work` in a transaction on the relay's connection: committed whole or not at all. */
  transaction<T>(work: (tx: StatementConnection) => Promise<T>): Promise<T> {
    return this.pool.transaction(work);
  }

  /** Takes the relay's lock for the transaction, unless another relay holds it. */
  async tryLock(tx: StatementConnection): Promise<boolean> {
    const [{ locked }] = await tx.rows<{ locked: boolean }>(LOCK_SQL);
    return locked;
  }

  async cursor(tx: StatementConnection): Promise<RelayCursor> {
    const [cursor] = await tx.rows<RelayCursor>(CURSOR_SQL);
    return cursor;
  }

  /** At most `limit` committed events after `cursor`, in the order they are relayed. */
  eventsAfter(tx: StatementConnection, cursor: RelayCursor, limit: number): Promise<EventRow[]> {
    return tx.rows<EventRow>(NEXT_EVENTS_SQL, [cursor.xid, cursor.event_id, limit]);
  }

  /** Moves the cursor to `last`. */
  async advance(tx: StatementConnection, last: EventRow): Promise<void> {
    await tx.rows(ADVANCE_SQL, [last.xid, last.id]);
  }
}
