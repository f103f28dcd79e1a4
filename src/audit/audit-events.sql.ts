import { type AuditAction, isAuditAction } from './audit-actions';

/**
 * The trail's table, written through these statements alone: a module records its events with
 * them and never names the table or its columns.
 */
const INSERT_INTO = 'INSERT INTO audit_events (actor, action, target, request_id)';

/** One event, its values `$1` actor, `$2` action, `$3` target, `$4` request id (or NULL). */
export const RECORD_AUDIT_EVENT_SQL = `${INSERT_INTO} VALUES ($1, $2, $3, $4)`;

/**
 * The events of the rows a statement changed, for a module that changes and records in one
 * statement (a common table expression): one event of `action` per row of `from`, the other
 * values given as SQL expressions over that row or the statement's parameters.
 *
 * ```ts
 * `WITH cancelled AS (UPDATE orders ... RETURNING id),
 *       audited AS (${auditEventsOfRows(OrderAuditActions.CANCELLED, {
 *         from: 'cancelled', actor: '$2::text', target: `'order:' || id`, requestId: '$3::text',
 *       })})
 *  SELECT ...`
 * ```
 */
export function auditEventsOfRows(
  action: AuditAction,
  values: { from: string; actor: string; target: string; requestId: string },
): string {
  // Declared names are `<subject>.<verb>` in lower case: safe as a literal of the statement.
  if (!isAuditAction(action)) throw new Error(`${action} is not a declared audit action`);
  return `${INSERT_INTO}
    SELECT ${values.actor}, '${action}', ${values.target}, ${values.requestId} FROM ${values.from}`;
}
