import { defineEventObjects } from '../audit/audit-objects';
import { orderJson } from './order-json';
import { ordersWithIds } from './orders.repository';

/** Whether `id` is an order id PostgreSQL's bigint holds. */
function isBigint(id: string): boolean {
  return /^\d{1,19}$/.test(id) && BigInt(id) <= 9223372036854775807n;
}

/** What an event about an order carries: the Order as v1 serves it, read in one statement. */
defineEventObjects('order', async (ids, db) => {
  const orders = new Map<string, string>();
  const wanted = ids.filter(isBigint);
  if (wanted.length === 0) return orders;
  for (const row of await ordersWithIds(db, wanted)) orders.set(row[0], orderJson(row));
  return orders;
});
