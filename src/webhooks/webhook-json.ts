/** An endpoint's row, as the statements of this module read it. */
export interface EndpointRow {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  secret_rotated_at: Date | null;
}

export const ENDPOINT_COLUMNS =
  'id, url, events, description, disabled_at, disabled_reason, created_at, secret_rotated_at';

/** A delivery's row, as the statements of this module read it. */
export interface DeliveryRow {
  id: string;
  webhook_id: string;
  type: string;
  status: string;
  attempts: number;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: string;
}

export const DELIVERY_COLUMNS = `id, webhook_id, type, status, attempts, last_attempt_at,
  last_status_code, last_error, next_attempt_at, delivered_at, created_at::text AS created_at`;

/** Copies the values that are set: nulls are left out of the JSON. */
function withoutNulls(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== null && value !== undefined),
  );
}

/** An Endpoint in JSON: never its secret (the answers that make one add it). */
export function endpointJson(row: EndpointRow): Record<string, unknown> {
  return withoutNulls({
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    disabled: row.disabled_at !== null,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at.toISOString(),
    secretRotatedAt: row.secret_rotated_at?.toISOString(),
  });
}

/** A Delivery in JSON. */
export function deliveryJson(row: DeliveryRow): Record<string, unknown> {
  return withoutNulls({
    id: row.id,
    eventId: row.webhook_id,
    type: row.type,
    status: row.status,
    attempts: row.attempts,
    lastAttemptAt: row.last_attempt_at?.toISOString(),
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at?.toISOString() : undefined,
    deliveredAt: row.delivered_at?.toISOString(),
  });
}

/**
 * The rows a statement returned through TypeORM's `query`: an UPDATE or DELETE with RETURNING
 * comes back as `[rows, affected]`, an INSERT or SELECT as the rows.
 */
export function returnedRows<T>(result: unknown): T[] {
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}

/** The first row a statement returned through TypeORM's `query` ({@link returnedRows}), if any. */
export async function firstReturned<T>(result: Promise<unknown>): Promise<T | undefined> {
  return returnedRows<T>(await result).at(0);
}
