import { auditEventsOfRows } from '../audit/audit-events.sql';
import { OrderAuditActions } from './order.audit';

/**
 * A statement sent by name (a prepared statement of pg): each pooled connection has PostgreSQL
 * parse and plan it once, then only bind and execute it. On the paths of every request (a
 * cancel, the list's first batch, v2's pages) that is most of the database's work per request
 * (docs/performance.md). Texts name their columns
 * (never `*`), so a migration that adds a column leaves running instances' plans valid.
 */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

/** The columns of an `OrderRow` (order-json.ts), in its order. */
export const ORDER_COLUMNS = `id, pet_id, quantity,
         to_char(ship_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ship_date,
         complete, status`;

/** Rows fetched from the server-side cursor per round trip, and so per chunk written. */
export const LIST_BATCH_SIZE = 1000;

/**
 * The first orders of the list, by id: one more than a batch, so a list that fits is answered
 * from this one round trip. No parameter, so pg sends it as one simple Query message.
 */
export const FIRST_ORDERS_SQL = `SELECT ${ORDER_COLUMNS} FROM orders ORDER BY id LIMIT ${LIST_BATCH_SIZE + 1}`;

export const FIRST_ORDERS: NamedStatement = { name: 'orders.first', text: FIRST_ORDERS_SQL };

/**
 * A batch of the rest of a longer list: the orders after id `$1`, an index range scan from there.
 * Each batch is one statement of its own, on whatever pooled connection is free: a list holds no
 * connection, and no transaction, while its client reads, and the statement timeout bounds each
 * batch, not the whole list.
 */
export const ORDERS_AFTER_SQL = `SELECT ${ORDER_COLUMNS} FROM orders WHERE id > $1 ORDER BY id LIMIT ${LIST_BATCH_SIZE}`;

export const ORDERS_AFTER: NamedStatement = { name: 'orders.after', text: ORDERS_AFTER_SQL };

/**
 * The transition is this one conditional UPDATE: only a pending row becomes cancelled, under the
 * row lock, so a cancel racing a shipment (or fifty cancels) can never both win. When it changes
 * nothing, the same statement reports the row's status, so the common answers take one round trip.
 * That status comes from the statement's snapshot: `pending` there means another transaction
 * changed the row while we waited for its lock, and `OrdersService.cancel` reads it again.
 * A cancel that changed the order writes its audit event (`$2` the actor, `$3` the request id)
 * in the same statement, so in the same transaction and round trip; one that changed nothing
 * writes none.
 */
export const CANCEL_SQL = `
  WITH cancelled AS (
    UPDATE orders SET status = 'cancelled'
     WHERE id = $1 AND status = 'pending'
    RETURNING id, status
  ), audited AS (
    ${auditEventsOfRows(OrderAuditActions.CANCELLED, {
      from: 'cancelled',
      actor: '$2::text',
      target: `'order:' || id`,
      requestId: '$3::text',
    })}
  )
  SELECT status FROM cancelled
  UNION ALL
  SELECT status FROM orders WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM cancelled)`;

export const CANCEL_ORDER: NamedStatement = { name: 'orders.cancel', text: CANCEL_SQL };

/** The status of one order (after a cancel that met a concurrent change). */
export const STATUS_SQL = 'SELECT status FROM orders WHERE id = $1';

export const ORDER_STATUS: NamedStatement = { name: 'orders.status', text: STATUS_SQL };
