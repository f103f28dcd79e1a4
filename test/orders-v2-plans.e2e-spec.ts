import { Pool } from 'pg';
import type { OrderPosition } from '../src/orders/pages/order-cursor';
import { parseOrderPageQuery } from '../src/orders/pages/order-page-query';
import { RANGE_ROWS } from '../src/orders/pages/order-page.sql';
import { seedPageOrders } from './support/page-orders';
import { explainPage, nodesOf } from './support/page-plans';
import { ORDER_SHAPES } from './support/page-shapes';
import { createTestDatabase } from './support/test-app';

/**
 * 100,000 orders spread as the bench's 1,000,000 are (500 pets scattered over the ids, ship dates
 * over two years unrelated to the id, 2 % undated, statuses mixed): the same selectivity of every
 * filter, so rows examined per page are what they are on the large store, at a tenth of the load.
 */
const ORDERS = 100_000;
const LIMIT = 100;

/**
 * The real criterion of a bounded page, for every shape of v2's parameters: the rows
 * each page examines (EXPLAIN ANALYZE: what every scan read, and every row a filter removed) stay
 * within twice its walk's bound (a multiple of `limit + 1`), and, where a ship-date range is read
 * first, within that range's bound (RANGE_ROWS) three times more: its ids, then the orders read
 * by id and those the filters removed. On page 1 and deep, whatever matches (many orders, a few,
 * none), on the plan PostgreSQL picks for the values (custom) and on the generic plan a prepared
 * statement keeps after five executions. The shared buffers each page touches stay about one per
 * row scanned, and a descent of the primary key per lookup by id (an index entry skipped within
 * the index is no row, but is a page read). No plan reads the table whole, or collects a bitmap of
 * what a condition matches; the only sort is of a narrow range's rows, RANGE_ROWS at most, and
 * no CTE keeps more than the range's count.
 */
describe('the rows v2 pages examine on 100,000 spread orders', () => {
  let db: Pool;
  /** Per sort, the position of the order at 90 % of the table: deep pages start there. */
  const deep = new Map<string, OrderPosition>();
  /** Per shipDate sort, an undated order's position: deep among the undated. */
  const undated = new Map<string, OrderPosition>();

  beforeAll(async () => {
    const databaseUrl = await createTestDatabase();
    db = new Pool({ connectionString: databaseUrl, max: 1 });
    expect(await seedPageOrders(databaseUrl, ORDERS)).toBeGreaterThan(0);
    const orderBy: Record<string, string> = {
      id: 'id',
      '-id': 'id DESC',
      shipDate: 'ship_date ASC NULLS LAST, id',
      '-shipDate': 'ship_date DESC NULLS LAST, id DESC',
    };
    for (const [sort, order] of Object.entries(orderBy)) {
      const { rows } = await db.query<{ id: string; ship: string | null }>(
        `SELECT id::text, to_char(ship_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ship
           FROM orders ORDER BY ${order} OFFSET $1 LIMIT 1`,
        [Math.floor(ORDERS * 0.9)],
      );
      deep.set(sort, {
        id: rows[0].id,
        shipDate: sort.includes('shipDate') ? rows[0].ship : undefined,
      });
      if (sort.includes('shipDate')) {
        const middle = await db.query<{ id: string }>(
          `SELECT id::text FROM orders WHERE ship_date IS NULL ORDER BY id OFFSET 500 LIMIT 1`,
        );
        undated.set(sort, { id: middle.rows[0].id, shipDate: null });
      }
    }
  }, 300_000);
  afterAll(() => db.end());

  const cases = ORDER_SHAPES.flatMap((query) => {
    const { sort } = parseOrderPageQuery(query);
    const pages: { query: string; page: string; sort: string }[] = [
      { query, page: 'page 1', sort },
      { query, page: 'deep', sort },
    ];
    if (sort.includes('shipDate') && !query.includes('shipDateFrom')) {
      pages.push({ query, page: 'deep among the undated', sort });
    }
    return pages;
  });

  it.each(cases)('?$query, $page: bounded rows examined, custom and generic', async (c) => {
    const after =
      c.page === 'page 1' ? undefined : (c.page === 'deep' ? deep : undated).get(c.sort);
    for (const generic of [false, true]) {
      const explained = await explainPage(db, c.query, after, LIMIT, generic);
      const { plan, text, values, examined, scanned, buffers, scanLimit } = explained;
      const nodes = nodesOf(plan);
      const types = nodes.map((node) => node['Node Type']);
      const where = `${generic ? 'generic' : 'custom'}: ${text} ${JSON.stringify(values)}: ${types.join(' > ')}`;
      const ranged = text.startsWith('WITH range');
      const bound = 2 * scanLimit + (ranged ? 3 * (RANGE_ROWS + 1) : 0);
      expect({ where, bounded: examined <= bound, examined, bound }).toEqual({
        where,
        bounded: true,
        examined,
        bound,
      });
      // Every index entry the scans passed is a row examined too, though no count shows those
      // the index skipped itself: they show as pages read. A lookup by id descends the tree.
      const within = buffers <= 1.1 * scanned + 30 + 3 * explained.lookups;
      expect({ where, scanned, buffers, within }).toEqual({
        where,
        scanned,
        buffers,
        within: true,
      });
      for (const type of types) {
        expect({ where, type }).toEqual({
          where,
          type: expect.not.stringMatching(/Seq Scan|Bitmap|Materialize|Hash/),
        });
      }
      // A sort only of a narrow range's rows, counted first and bounded: the rows of the range's
      // index scan (a Limit over it), as they come or through the page's filters.
      for (const node of nodes.filter((n) => n['Node Type'] === 'Sort')) {
        let input = node.Plans?.[0];
        while (input?.['Node Type'] === 'Subquery Scan') input = input.Plans?.[0];
        expect({ where, ranged, input: input?.['Node Type'] }).toEqual({
          where,
          ranged: true,
          input: 'Limit',
        });
        expect(input?.['Actual Rows'] ?? 0).toBeLessThanOrEqual(RANGE_ROWS + 1);
      }
      // Only the range's count is kept aside: no CTE holds its entries or its rows, which would
      // cost a copy of each on top of reading it.
      const kept = nodes.filter((n) => n['Node Type'] === 'CTE Scan');
      expect({
        where,
        kept: kept.map((n) => n['Actual Rows'] ?? 0).filter((rows) => rows > 1),
      }).toEqual({ where, kept: [] });
    }
  });
});
