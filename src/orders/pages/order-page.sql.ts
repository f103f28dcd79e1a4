import { createHash } from 'node:crypto';
import type { OrderPosition } from './order-cursor';
import type { OrderRow } from '../order-json';
import { MAX_PAGE_LIMIT, type OrderFilter, type OrderSort } from './order-page-query';
import { ORDER_STATUSES } from '../order-status';
import type { NamedStatement } from '../../database/statements';

/**
 * A row of a page's scan: an `OrderRow` whose ship date is exact (microseconds, as a cursor
 * carries it; the Order JSON gives it in milliseconds, `orderPageJson`), then whether the order
 * matches the page's filters, and whether it is the last row the scan may examine (sent, matching
 * or not, for its position: the next page resumes after it).
 */
export type OrderScanRow = [...OrderRow, matched: boolean, atBound: boolean];

/** A page's rows, as the client sees them. */
export type OrderPageRow = OrderRow;

/**
 * How many orders a page examines at least, per order it may return (`limit + 1`), before it ends
 * short. What bounds the shapes no index serves: such a page may end short, or empty, and resume
 * where its scan stopped. A filter on status or complete that PostgreSQL's statistics show to be
 * sparse may examine more, up to MAX_SCAN_FACTOR (order-page-estimate.ts).
 */
export const SCAN_FACTOR = 4;

/** The rows a page of `limit` orders may examine. */
export const scanLimitOf = (limit: number, factor = SCAN_FACTOR): number => factor * (limit + 1);

/**
 * At most how many orders of a ship-date range the largest page sorted by id reads through the
 * range's own index, sorting them by id, instead of walking the ids. A page of `limit` reads at
 * most `scanLimitOf(limit)`: the same bound as its walk, so a small page never pays for a large
 * range read.
 */
export const RANGE_ROWS = scanLimitOf(MAX_PAGE_LIMIT);

/**
 * The planner settings of a page. The statement already names the one index its scan can use
 * (the conditions in its WHERE); these keep the planner from reading that index any other way
 * than in order, with a LIMIT: no bitmap scan and sort of what a condition matches (unbounded: a
 * pet's every undated order), no sequential scan. The one sort left is the one a statement cannot
 * do without: a narrow ship-date range's orders by id, bounded (`rangeOrWalk`). And the generic
 * plan from the first execution on: it is the same range scan (the EXPLAIN test checks both kinds
 * of plan for every shape), planned once per connection instead of for each of a statement's first
 * five executions, and no switch to another plan after them can happen. Set on the pages' own
 * connections when they open (OrderPagesRepository), so a page costs no statement but its own.
 */
export const PAGE_PLANNER_SETTINGS: Readonly<Record<string, string>> = {
  enable_seqscan: 'off',
  enable_bitmapscan: 'off',
  enable_sort: 'off',
  plan_cache_mode: 'force_generic_plan',
};

/** The secret v2's cursors are signed with, as the migration CreateOrderCursorSecret stored it. */
export const CURSOR_SECRET_SQL = 'SELECT secret FROM order_cursor_secret WHERE id = 1';

/**
 * The statistics of `orders.status` and `orders.complete` (`pg_stats`' most common values and
 * their shares), as `fractionsOf` (order-page-estimate.ts) reads them; no row for a table never
 * analysed.
 */
export const FILTER_STATISTICS_SQL = `
  SELECT attname AS column, most_common_vals::text AS values, most_common_freqs AS shares
    FROM pg_stats
   WHERE schemaname = current_schema() AND tablename = 'orders'
     AND attname IN ('status', 'complete')`;

/**
 * The one statement of a page, sent by name (see `NamedStatement`); its last two parameters are
 * appended when it runs: the rows the scan may examine, then the rows the page may return.
 */
export interface PageStatement extends NamedStatement {
  values: unknown[];
  /**
   * Every row the scan reads matches the filters, so the statement returns `OrderRow`s (no
   * `matched` and `atBound` columns): at most `limit + 1`, fewer than the scan's bound.
   */
  everyRowMatches: boolean;
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

/**
 * The statement that reads the page after `after` (from the start without it). One statement
 * whatever the shape, so that a page's database time is one statement's.
 *
 * The scan is a range scan of one index, chosen here rather than by the planner, in the page's
 * sort, from the cursor's position (keyset: never an OFFSET, so page 1 and page 10,000 cost the
 * same): by id, the primary key, or (pet_id, id) with a petId; by ship date, (ship_date, id), or
 * (pet_id, ship_date, id) with a petId, the ship-date range as its bounds. Only the conditions that
 * index answers are in the scan's WHERE; it examines at most `scanLimitOf(limit)` rows, and every
 * other filter (status, complete, the ship-date range of an id sort) is checked on those rows
 * outside it, where the planner cannot push it back into the scan (a subquery with a LIMIT). So
 * a page examines a bounded number of rows whatever matches, and the plan cannot turn into a scan
 * that reads the table to find a few orders, custom or generic. When the scan reaches its bound
 * before the page is full, its last row comes back too (`matched` false unless it matches), to
 * say where the next page resumes. Sorted by id within a ship-date range, the page may instead be
 * read through the range's index, when the range is narrow (`rangeOrWalk`).
 *
 * The shipDate sorts put orders without a ship date last in both directions, ties by id in the
 * same direction: the dated orders by (ship_date, id), then the undated ones by id, as two
 * branches of a UNION ALL (each a plain range scan: no index can start one scan across the NULL
 * boundary), the second read only once the first is exhausted. A cursor past the boundary reads
 * only undated orders. Descending, the indexes are read backwards: `DESC NULLS FIRST` is their
 * backward order.
 */
export function orderPageStatement(
  filter: OrderFilter,
  sort: OrderSort,
  after: OrderPosition | undefined,
): PageStatement {
  const values: unknown[] = [];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const descending = sort.startsWith('-');
  const gt = descending ? '<' : '>';
  const byPet = filter.petId === undefined ? '' : `pet_id = ${param(filter.petId)}::int8 AND `;
  const branches: string[] = [];
  const checks = residualOf(filter, param);
  const residual = [...checks];
  let ranged: { where: string; from: string; order: string } | undefined;

  if (sort === 'id' || sort === '-id') {
    const from = after ? `id ${gt} ${param(after.id)}::int8` : 'true';
    const order = descending ? 'id DESC' : 'id';
    branches.push(branch(`${byPet}${from}`, order));
    const range: string[] = [];
    if (filter.shipDateFrom !== undefined)
      range.push(`ship_date >= ${param(filter.shipDateFrom)}::timestamptz`);
    if (filter.shipDateTo !== undefined)
      range.push(`ship_date < ${param(filter.shipDateTo)}::timestamptz`);
    residual.push(...range);
    // A pet's own orders are walked by (pet_id, id), cheaper a row than a range's lookups by id.
    if (range.length > 0 && filter.petId === undefined) {
      ranged = { where: range.join(' AND '), from, order };
    }
  } else {
    const order = descending ? 'ship_date DESC NULLS FIRST, id DESC' : 'ship_date, id';
    if (after?.shipDate !== null) {
      const from =
        filter.shipDateFrom === undefined
          ? undefined
          : `ship_date >= ${param(filter.shipDateFrom)}::timestamptz`;
      const to =
        filter.shipDateTo === undefined
          ? undefined
          : `ship_date < ${param(filter.shipDateTo)}::timestamptz`;
      // Ascending, NULLs come after every date in the index: the scan stops at the first.
      const bounds = descending && after ? [] : ['ship_date IS NOT NULL'];
      if (after?.shipDate === undefined) {
        bounds.push(...[from, to].filter((bound) => bound !== undefined));
      } else {
        // The scan starts at the cursor. A range bound on the same side is met by every row
        // after it, but given too, a B-tree may start the scan at that bound instead, and skip
        // every entry up to the cursor inside the index: it is checked on the rows instead.
        const [start, end] = descending ? [to, from] : [from, to];
        if (start !== undefined) residual.push(start);
        if (end !== undefined) bounds.push(end);
        const shipDate = param(after.shipDate);
        bounds.push(`(ship_date, id) ${gt} (${shipDate}::timestamptz, ${param(after.id)}::int8)`);
      }
      branches.push(branch(`${byPet}${bounds.join(' AND ')}`, order));
    }
    // An order without a ship date never matches a bound.
    if (filter.shipDateFrom === undefined && filter.shipDateTo === undefined) {
      const from = after?.shipDate === null ? ` AND id ${gt} ${param(after.id)}::int8` : '';
      branches.push(branch(`${byPet}ship_date IS NULL${from}`, order));
    }
  }

  const scanLimit = `$${values.length + 1}`;
  const pageLimit = `$${values.length + 2}`;
  const columns =
    `SELECT id, pet_id, quantity, ` +
    `to_char(ship_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), complete, status`;
  const union = (limit: string): string =>
    branches.map((b) => `(${b.replace('$LIMIT', () => limit)})`).join(' UNION ALL ');
  const everyRowMatches = residual.length === 0;
  let text: string;
  if (everyRowMatches) {
    // The page is the scan's first `limit + 1` rows, fewer than its bound: no row numbers, no
    // second filter, and no `matched`/`atBound` columns to send and parse. (LEAST names the
    // scan's bound too, which every statement takes.)
    const limit = `LEAST(${scanLimit}::int8, ${pageLimit}::int8)`;
    text = `${columns} FROM (${union(limit)}) AS branches LIMIT ${limit}`;
  } else {
    const matched = residual.join(' AND ');
    const walk =
      `${columns}, ${matched}, n = ${scanLimit} FROM (` +
      `SELECT *, row_number() OVER () AS n FROM (${union(scanLimit)}) AS branches ` +
      `LIMIT ${scanLimit}) AS scan `;
    const kept = `(${matched}) OR n = ${scanLimit}`;
    text = ranged
      ? rangeOrWalk(ranged, checks, columns, `${walk}WHERE (${kept})`, pageLimit)
      : `${walk}WHERE ${kept} LIMIT ${pageLimit}`;
  }
  return { name: statementName(text), text, values, everyRowMatches };
}

/**
 * A page sorted by id within a ship-date range, by whichever of two plans the range calls for,
 * chosen as the statement runs, for these values: the range's own index, (ship_date, id), is
 * counted first, index-only, up to `scanLimitOf(limit)` + 1 entries (RANGE_ROWS + 1 for the
 * largest page). When the range holds no more than that bound, its orders are read through the
 * same index, rows this time, and the page is the first after the cursor, by id, that pass the
 * other filters: the range holds every order that can match, so the page is full, or the last.
 * When it holds more, the page is the bounded walk of the ids (`walk`), as for any other filter.
 * Both plans are in the one statement, each under a condition on the count that only the
 * execution knows, so the choice is made per page, whatever plan the statement was prepared with.
 *
 * Only the count is kept aside (`range`, one row): the entries counted and the rows read go
 * straight on to the count and to the sort, which a CTE holding them would first copy. The count
 * stays a pass of its own, index-only: reading the rows at once would read those of a wide range
 * too, only to walk the ids after them.
 */
function rangeOrWalk(
  range: { where: string; from: string; order: string },
  checks: string[],
  columns: string,
  walk: string,
  pageLimit: string,
): string {
  const bound = `${SCAN_FACTOR} * ${pageLimit}::int8`;
  const kept = [range.from, ...checks].join(' AND ');
  const narrow = '(SELECT narrow FROM range)';
  return (
    `WITH range AS MATERIALIZED (SELECT count(*) <= ${bound} AS narrow FROM (` +
    `SELECT FROM orders WHERE ${range.where} ORDER BY ship_date LIMIT ${bound} + 1) AS entries) ` +
    `(${columns}, true, false FROM (SELECT * FROM (` +
    `SELECT id, pet_id, quantity, ship_date, complete, status FROM orders ` +
    `WHERE ${range.where} AND ${narrow} ORDER BY ship_date LIMIT ${bound}) AS in_range ` +
    `WHERE ${kept} ORDER BY ${range.order} LIMIT ${pageLimit}) AS page) ` +
    `UNION ALL (${walk} AND NOT ${narrow} LIMIT ${pageLimit})`
  );
}

/** One index range scan of the page: the conditions the index answers, in its order. */
function branch(where: string, orderBy: string): string {
  return (
    'SELECT id, pet_id, quantity, ship_date, complete, status FROM orders ' +
    `WHERE ${where} ORDER BY ${orderBy} LIMIT $LIMIT`
  );
}

/** The conditions no index of a page answers: status and complete. */
function residualOf(filter: OrderFilter, param: (value: unknown) => string): string[] {
  const where: string[] = [];
  const { statuses } = filter;
  // Every status is no condition at all (the table allows no other).
  if (statuses && statuses.length < ORDER_STATUSES.length) {
    where.push(
      statuses.length === 1
        ? `status = ${param(statuses[0])}`
        : `status = ANY(${param(statuses)}::text[])`,
    );
  }
  if (filter.complete !== undefined) where.push(`complete = ${param(filter.complete)}`);
  return where;
}
