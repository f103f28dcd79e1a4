import { createHash } from 'node:crypto';
import type { OrderPosition } from './order-cursor';
import type { OrderRow } from './order-json';
import type { OrderFilter, OrderSort } from './order-page-query';
import { ORDER_STATUSES } from './order-status';
import type { NamedStatement } from './orders.sql';

/**
 * A row of a page: an `OrderRow` whose ship date is exact (microseconds, as a cursor carries it);
 * the Order JSON gives it in milliseconds (`orderPageJson`).
 */
export type OrderPageRow = OrderRow;

/**
 * One statement of a page, sent by name (see `NamedStatement`); its row limit is appended as the
 * last parameter.
 */
export interface PageStatement extends NamedStatement {
  values: unknown[];
}

/**
 * Names by text: one per combination of filters, sort and cursor kind (a few hundred at most), so
 * each pooled connection prepares each shape of page once.
 */
const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `orders.page.${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
}

const PAGE_COLUMNS = `id, pet_id, quantity,
         to_char(ship_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ship_date,
         complete, status`;

/**
 * The statements that read a page after `after` (from the start without it), in sort order: run
 * them one after the other until the page is full. Keyset pagination: each is one index range
 * scan starting at the cursor's position (see the migration AddOrderPageIndexes), never an OFFSET,
 * so page 1 and page 10,000 cost the same.
 *
 * The id sorts are one statement. The shipDate sorts put orders without a ship date last in both
 * directions, ties by id in the same direction: the orders with a ship date by (ship_date, id),
 * then those without by id. Those are two range scans of the same (ship_date, id) index, one per
 * statement, so each stays a plain range scan and none of them needs an OR across the NULL
 * boundary (which no index can start a scan at): a cursor before the boundary reads the rest of
 * the dated orders, then the undated ones from their first; a cursor past it reads only undated
 * orders after its id. Descending, the index is read backwards: `DESC NULLS FIRST` is its
 * backward order, and there are no NULLs in a `ship_date IS NOT NULL` scan to place anyway.
 */
export function orderPageStatements(
  filter: OrderFilter,
  sort: OrderSort,
  after: OrderPosition | undefined,
): PageStatement[] {
  const descending = sort.startsWith('-');
  const [gt, dir] = descending ? ['<', 'DESC'] : ['>', 'ASC'];

  if (sort === 'id' || sort === '-id') {
    const statement = filtered(filter);
    if (after) statement.where.push(`id ${gt} ${statement.param(after.id)}::int8`);
    return [statement.build(`id ${dir}`)];
  }

  // Qualified: a bare `ship_date` in ORDER BY would name the formatted output column.
  const order = descending
    ? 'orders.ship_date DESC NULLS FIRST, orders.id DESC'
    : 'orders.ship_date ASC, orders.id ASC';
  const statements: PageStatement[] = [];
  if (after?.shipDate !== null) {
    const dated = filtered(filter);
    if (after?.shipDate === undefined) {
      dated.where.push('ship_date IS NOT NULL');
    } else {
      const shipDate = dated.param(after.shipDate);
      const id = dated.param(after.id);
      dated.where.push(`(ship_date, id) ${gt} (${shipDate}::timestamptz, ${id}::int8)`);
    }
    statements.push(dated.build(order));
  }
  // An order without a ship date never matches a bound.
  if (filter.shipDateFrom === undefined && filter.shipDateTo === undefined) {
    const undated = filtered(filter);
    undated.where.push('ship_date IS NULL');
    if (after?.shipDate === null) {
      undated.where.push(`id ${gt} ${undated.param(after.id)}::int8`);
    }
    statements.push(undated.build(order));
  }
  return statements;
}

/** A statement under construction: the filter's conditions, and its parameters. */
function filtered(filter: OrderFilter) {
  const values: unknown[] = [];
  const where: string[] = [];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const { statuses } = filter;
  // Every status is no condition at all (the table allows no other).
  if (statuses && statuses.length < ORDER_STATUSES.length) {
    // One status as `=`, so the planner reads (status, …) indexes in order: `= ANY` of one
    // value would not tell it the scan is ordered.
    where.push(
      statuses.length === 1
        ? `status = ${param(statuses[0])}`
        : `status = ANY(${param(statuses)}::text[])`,
    );
  }
  if (filter.petId !== undefined) where.push(`pet_id = ${param(filter.petId)}::int8`);
  if (filter.complete !== undefined) where.push(`complete = ${param(filter.complete)}`);
  if (filter.shipDateFrom !== undefined) {
    where.push(`ship_date >= ${param(filter.shipDateFrom)}::timestamptz`);
  }
  if (filter.shipDateTo !== undefined) {
    where.push(`ship_date < ${param(filter.shipDateTo)}::timestamptz`);
  }
  return {
    where,
    param,
    build: (orderBy: string): PageStatement => {
      const text =
        `SELECT ${PAGE_COLUMNS} FROM orders` +
        (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
        ` ORDER BY ${orderBy} LIMIT $${values.length + 1}`;
      return { name: statementName(text), text, values };
    },
  };
}
