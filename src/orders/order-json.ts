import { OrderStatus } from './order-status';

/**
 * A row of {@link LIST_ORDERS_SQL} in array mode: int8 columns arrive as exact decimal strings and
 * `ship_date` already formatted as ISO 8601 UTC by PostgreSQL.
 */
export type OrderRow = [
  id: string,
  petId: string | null,
  quantity: number | null,
  shipDate: string | null,
  complete: boolean,
  status: OrderStatus,
];

export const LIST_ORDERS_SQL = `
  SELECT id, pet_id, quantity,
         to_char(ship_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ship_date,
         complete, status
    FROM orders
   ORDER BY id`;

/**
 * The one mapping from a row to the Order JSON of the contract. Written by hand so int64 values
 * go out as exact, unquoted integers (JSON.stringify would need them as JS numbers) and nulls are
 * left out. Every value here is a number, a boolean, an ISO date or a status constrained by the
 * table, so none needs escaping.
 */
export function orderJson(row: OrderRow): string {
  const [id, petId, quantity, shipDate, complete, status] = row;
  let json = `{"id":${id}`;
  if (petId !== null) json += `,"petId":${petId}`;
  if (quantity !== null) json += `,"quantity":${quantity}`;
  if (shipDate !== null) json += `,"shipDate":"${shipDate}"`;
  return `${json},"complete":${complete},"status":"${status}"}`;
}
