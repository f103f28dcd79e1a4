import { Pool } from 'pg';
import type { OrderPosition } from '../src/orders/order-cursor';
import { parseOrderPageQuery } from '../src/orders/order-page-query';
import { orderPageStatements } from '../src/orders/order-page.sql';
import { seedPageOrders } from './support/page-orders';
import { createTestDatabase } from './support/test-app';

const ORDERS = 1_000_000;
const LIMIT = 100;
/** The ship date of order g (for g not a multiple of 4; those have none). */
const shipDateOf = (g: number): string =>
  new Date(Date.parse('2026-01-01T00:00:00Z') + g * 60_000).toISOString().replace('Z', '000Z');

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/**
 * The plans PostgreSQL picks for every statement of v2's pages, on a table of 1,000,000 orders
 * with the migrations' indexes: each is an index range scan, in the order of the page, first page
 * and deep page alike: no Seq Scan, no Sort, no Bitmap scan (whose output would need sorting).
 */
describe('the plans of v2 pages on 1,000,000 orders', () => {
  let db: Pool;

  beforeAll(async () => {
    const databaseUrl = await createTestDatabase();
    db = new Pool({ connectionString: databaseUrl, max: 1 });
    // ids 1..1,000,000; every status; 10,000 orders per pet; a ship date on three orders in four;
    // the migrations' indexes rebuilt after the load.
    expect(await seedPageOrders(databaseUrl, ORDERS)).toBeGreaterThan(0);
  }, 300_000);
  afterAll(() => db.end());

  /** The shapes of the issue; the deep page starts after the 900,000th order of the table. */
  const shapes: [string, OrderPosition, OrderPosition?][] = [
    ['', { id: '900000' }],
    ['status=pending', { id: '900000' }],
    ['petId=42', { id: '900000' }],
    ['complete=false', { id: '900000' }],
    ['shipDateFrom=2026-01-01T00:00:00Z&shipDateTo=2028-01-01T00:00:00Z', { id: '900000' }],
    [
      'shipDateFrom=2026-01-01T00:00:00Z&shipDateTo=2028-01-01T00:00:00Z&sort=shipDate',
      { id: '900001', shipDate: shipDateOf(900001) },
    ],
    ['sort=-id', { id: '100000' }],
    [
      'sort=-shipDate',
      { id: '100001', shipDate: shipDateOf(100001) },
      { id: '900000', shipDate: null },
    ],
    [
      'sort=shipDate',
      { id: '900001', shipDate: shipDateOf(900001) },
      { id: '900000', shipDate: null },
    ],
    [
      'status=pending&sort=shipDate',
      { id: '900001', shipDate: shipDateOf(900001) },
      { id: '900000', shipDate: null },
    ],
    [
      'status=pending&sort=-shipDate',
      { id: '100001', shipDate: shipDateOf(100001) },
      { id: '100002', shipDate: null },
    ],
  ];

  const cases = shapes.flatMap(([query, deep, undated]) => [
    { query, page: 'first page', after: undefined },
    { query, page: 'deep page', after: deep },
    ...(undated ? [{ query, page: 'deep page among the undated', after: undated }] : []),
  ]);

  /**
   * Every statement of the page is index range scans in the page's order: none of the node
   * types that would read the table whole or sort it. `generic`: the plan PostgreSQL may keep
   * for a prepared statement (the service sends pages by name) after its first executions,
   * planned without the parameters' values.
   */
  async function expectRangeScans(
    query: string,
    after: OrderPosition | undefined,
    generic: boolean,
  ): Promise<void> {
    const { filter, sort } = parseOrderPageQuery(query);
    const statements = orderPageStatements(filter, sort, after);
    expect(statements.length).toBeGreaterThan(0);
    for (const [index, { text, values }] of statements.entries()) {
      const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        generic ? `EXPLAIN (FORMAT JSON, GENERIC_PLAN) ${text}` : `EXPLAIN (FORMAT JSON) ${text}`,
        generic ? [] : [...values, LIMIT + 1],
      );
      const nodes = nodesOf(rows[0]['QUERY PLAN'][0].Plan);
      const types = nodes.map((node) => node['Node Type']);
      const where = `${text} ${JSON.stringify(values)}: ${types.join(' > ')}`;
      expect({ where, types }).toEqual({
        where,
        types: expect.arrayContaining([expect.stringMatching(/^Index (Only )?Scan$/)]),
      });
      for (const type of types) {
        expect({ where, type }).toEqual({
          where,
          type: expect.not.stringMatching(/Seq Scan|Sort|Bitmap|Materialize|Hash/),
        });
      }
      if (after && index === 0) {
        const conditions = nodes.map((node) => node['Index Cond'] ?? '').join(' ');
        expect({ where, conditions }).toEqual({
          where,
          conditions: expect.stringMatching(after.shipDate ? /ship_date, id\) [<>]/ : /id [<>]/),
        });
      }
    }
  }

  it.each(cases)('?$query, $page: index range scans only', ({ query, after }) =>
    expectRangeScans(query, after, false),
  );

  it.each(cases)('?$query, $page, generic plan: index range scans only', ({ query, after }) =>
    expectRangeScans(query, after, true),
  );
});
