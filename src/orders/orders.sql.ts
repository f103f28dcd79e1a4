/**
 * The transition is this one conditional UPDATE: only a pending row becomes cancelled, under the
 * row lock, so a cancel racing a shipment (or fifty cancels) can never both win. When it changes
 * nothing, the same statement reports the row's status, so the common answers take one round trip.
 * That status comes from the statement's snapshot: `pending` there means another transaction
 * changed the row while we waited for its lock, and `OrdersService.cancel` reads it again.
 */
export const CANCEL_SQL = `
  WITH cancelled AS (
    UPDATE orders SET status = 'cancelled'
     WHERE id = $1 AND status = 'pending'
    RETURNING status
  )
  SELECT status FROM cancelled
  UNION ALL
  SELECT status FROM orders WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM cancelled)`;

/** The status of one order (after a cancel that met a concurrent change). */
export const STATUS_SQL = 'SELECT status FROM orders WHERE id = $1';
