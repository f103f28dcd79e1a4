import { auditEventsOfRows } from '../audit/audit-events.sql';
import type { NamedStatement } from '../database/statements';
import { OrderAuditActions } from './order.audit';

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

/** The orders of some ids, as an event's objects (order.events.ts). */
export const ORDERS_WITH_IDS: NamedStatement = {
  name: 'events.orders',
  text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ANY ($1::bigint[])`,
};

/** Whether the table holds no order yet (the embedded database's first start). */
export const NO_ORDERS_SQL = 'SELECT NOT EXISTS (SELECT 1 FROM orders) AS empty';

/** Demo orders in every status, so a fresh `npm start` has something to list and cancel. */
export const DEMO_ORDERS_SQL = `
  INSERT INTO orders (pet_id, quantity, ship_date, complete, status) VALUES
    (101, 1, now() + interval '2 days', false, 'pending'),
    (102, 3, now() + interval '5 days', false, 'pending'),
    (103, 2, now() - interval '1 day', true, 'shipped'),
    (104, 1, now() - interval '3 days', true, 'shipped'),
    (105, 4, NULL, false, 'cancelled'),
    (9223372036854775807, 1, NULL, false, 'pending')`;
