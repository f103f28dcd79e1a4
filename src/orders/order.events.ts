import { defineEventObjects } from '../audit/audit-objects';
import { pgPoolOf } from '../platform/pg-pool';
import { orderJson, type OrderRow } from './order-json';
import { ORDER_COLUMNS } from './orders.sql';

/** Whether `id` is an order id PostgreSQL's bigint holds. */
function isBigint(id: string): boolean {
  return /^\d{1,19}$/.test(id) && BigInt(id) <= 9223372036854775807n;
}

/** What an event about an order carries: the Order as v1 serves it, read in one statement. */
defineEventObjects('order', async (ids, db) => {
  const orders = new Map<string, string>();
  const wanted = ids.filter(isBigint);
  if (wanted.length === 0) return orders;
  const result = await pgPoolOf(db).query<OrderRow>({
    name: 'events.orders',
    text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ANY ($1::bigint[])`,
    values: [wanted],
    rowMode: 'array',
  });
  for (const row of result.rows) orders.set(row[0], orderJson(row));
  return orders;
});
