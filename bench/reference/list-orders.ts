import type { NamedStatement } from '../../src/database/statements';
import { ORDER_COLUMNS } from '../../src/orders/orders.sql';

/**
 * Every order, by id, in one statement: what the bench's bare servers (bare NestJS, node:http)
 * send for a list, with the service's own columns. The service itself reads the list in batches.
 */
export const LIST_ORDERS: NamedStatement = {
  name: 'orders.list',
  text: `SELECT ${ORDER_COLUMNS} FROM orders ORDER BY id`,
};
