import { OrderStatus } from './order-status';

/**
 * A row of the list statements (orders.sql.ts) in array mode: int8 columns arrive as exact
 * decimal strings and `ship_date` already formatted as ISO 8601 UTC by PostgreSQL.
 */
export type OrderRow = [
  id: string,
  petId: string | null,
  quantity: number | null,
  shipDate: string | null,
  complete: boolean,
  status: OrderStatus,
];

/**
 * The one mapping from a row to the Order JSON of the API. Written by hand so int64 values
 * go out as exact, unquoted integers (JSON.stringify would need them as JS numbers) and nulls are
 * left out. Every value here is a number, a boolean, an ISO date or a status constrained by the
 * table, so none needs escaping. Columns after the Order's own (a page's sort key) are ignored.
 */
export function orderJson(row: readonly [...OrderRow, ...unknown[]]): string {
  const [id, petId, quantity, shipDate, complete, status] = row;
  let json = `{"id":${id}`;
  if (petId !== null) json += `,"petId":${petId}`;
  if (quantity !== null) json += `,"quantity":${quantity}`;
  if (shipDate !== null) json += `,"shipDate":"${shipDate}"`;
  return `${json},"complete":${complete},"status":"${status}"}`;
}
