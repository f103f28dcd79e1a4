import type { PoolClient } from 'pg';
import { encodeCursor } from '../src/orders/pages/order-cursor';
import { OrderCursorSecret } from '../src/orders/pages/order-cursor-secret';
import { OrderPagesRepository } from '../src/orders/pages/order-pages.repository';
import { parseOrderPageQuery } from '../src/orders/pages/order-page-query';
import { api } from './support/client';
import { seedPageOrders } from './support/page-orders';
import { SOME_PET } from './support/page-shapes';
import { createTestApp, createTestDatabase, type TestApp } from './support/test-app';

/**
 * 200,000 orders spread as a real store's (two years of ship dates unrelated to the id, 500 pets,
 * 25 % pending, 15 % cancelled): each filter here selects as large a share as on a store of
 * 1,000,000, so a page meets as many matches per order it examines.
 */
const ORDERS = 200_000;
const LIMIT = 1000;
const DAY = 'shipDateFrom=2025-06-01T00:00:00Z&shipDateTo=2025-06-02T00:00:00Z';

/**
 * Filters an index serves, and a status a quarter of the orders hold (examined as far as its share
 * calls for). A sparser status alone, which no index serves, may end a page short: no index holds
 * a status, so that cancelling stays cheap (below).
 */
const FILTERS: { query: string; where: string }[] = [
  { query: DAY, where: `ship_date >= '2025-06-01Z' AND ship_date < '2025-06-02Z'` },
  { query: `petId=${SOME_PET}`, where: `pet_id = ${SOME_PET}` },
  { query: 'status=pending', where: `status = 'pending'` },
  {
    query: `petId=${SOME_PET}&shipDateFrom=2025-03-01T00:00:00Z&shipDateTo=2025-09-01T00:00:00Z`,
    where: `pet_id = ${SOME_PET} AND ship_date >= '2025-03-01Z' AND ship_date < '2025-09-01Z'`,
  },
  {
    query: `status=cancelled&${DAY}`,
    where: `status = 'cancelled' AND ship_date >= '2025-06-01Z' AND ship_date < '2025-06-02Z'`,
  },
];
const SORTS = ['id', '-id', 'shipDate', '-shipDate'];

interface Page {
  data: { id: number }[];
  hasMore: boolean;
  nextCursor?: string;
}

/**
 * Pages of 1,000 are full where an index serves the filter, whatever the sort: the first holds at
 * least 90 % of min(1,000, matching), and walking every page takes at most
 * ⌈matching / 1,000⌉ + 1 requests, every matching order once. With the page connections' plans
 * generic (as they run) and custom (replanned for each page's values): the choice of plan is the
 * statement's, at each execution, so neither kind of plan brings a short page back.
 */
describe('full v2 pages on 200,000 spread orders', () => {
  let t: TestApp;
  const matching = new Map<string, number>();

  beforeAll(async () => {
    const databaseUrl = await createTestDatabase();
    await seedPageOrders(databaseUrl, ORDERS);
    t = await createTestApp({ databaseUrl });
    for (const { query, where } of FILTERS) {
      const { rows } = await t.db.query<{ n: string }>(
        `SELECT count(*) AS n FROM orders WHERE ${where}`,
      );
      matching.set(query, Number(rows[0].n));
    }
  }, 120_000);
  afterAll(() => t.close());

  /** Runs `work` on every connection of the pages' pool, held at once so that each is reached. */
  async function onEveryPageConnection<T>(work: (client: PoolClient) => Promise<T>): Promise<T[]> {
    const { pool } = t.app.get(OrderPagesRepository).connections;
    const clients: PoolClient[] = [];
    try {
      for (let i = 0; i < pool.options.max; i++) clients.push(await pool.connect());
      const results: T[] = [];
      for (const client of clients) results.push(await work(client));
      return results;
    } finally {
      for (const client of clients) client.release();
    }
  }

  it('continues a walk of the ids from a cursor a short page gave, where that walk stopped', async () => {
    // A page of one day's orders by id used to walk the ids and stop after 4 × 1,001 of them,
    // whatever matched: its cursor names the last id it examined, an order of another day.
    const { filter, sort } = parseOrderPageQuery(`${DAY}&sort=id`);
    const cursor = encodeCursor(await t.app.get(OrderCursorSecret).get(), filter, sort, {
      id: '4004',
    });
    const res = await api(t)
      .get(`/v2/store/orders?${DAY}&sort=id&limit=${LIMIT}&cursor=${cursor}`)
      .expect(200);
    const { rows } = await t.db.query<{ id: string }>(
      `SELECT id::text FROM orders WHERE ${FILTERS[0].where} AND id > 4004 ORDER BY orders.id`,
    );
    expect((res.body as Page).data.map((order) => String(order.id))).toEqual(
      rows.map((row) => row.id),
    );
    expect((res.body as Page).hasMore).toBe(false);
  });

  it('indexes neither status nor complete: a cancel or a shipment may stay a heap-only update', async () => {
    // Full pages of a sparse status would need an index holding it, and every cancel would then
    // write an entry into each index of the table (docs/performance.md weighs the two).
    const { rows } = await t.db.query<{ name: string; definition: string }>(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE tablename = 'orders'`,
    );
    const columns = rows.map(({ name, definition }) => ({
      name,
      columns: definition.slice(definition.indexOf(' USING ')),
    }));
    expect(columns.filter((index) => /\b(status|complete)\b/.test(index.columns))).toEqual([]);
    expect(columns.length).toBeGreaterThan(1);
  });

  describe.each(['force_custom_plan', 'force_generic_plan'])('plans %s', (planCacheMode) => {
    beforeAll(() =>
      onEveryPageConnection((client) => client.query(`SET plan_cache_mode = ${planCacheMode}`)),
    );
    afterAll(async () => {
      // The pages ran with the mode set: no connection was replaced meanwhile.
      const modes = await onEveryPageConnection(
        async (client) => (await client.query('SHOW plan_cache_mode')).rows[0] as unknown,
      );
      expect(new Set(modes.map((mode) => JSON.stringify(mode)))).toEqual(
        new Set([JSON.stringify({ plan_cache_mode: planCacheMode })]),
      );
    });

    const cases = FILTERS.flatMap(({ query }) => SORTS.map((sort) => ({ query, sort })));

    it.each(cases)(
      '?$query&sort=$sort: a full first page, a walk of the fewest pages',
      async ({ query, sort }) => {
        const expected = matching.get(query) ?? 0;
        const first = `/v2/store/orders?${query}&sort=${sort}&limit=${LIMIT}`;
        const ids: number[] = [];
        const sizes: number[] = [];
        let path = first;
        // Twice the pages allowed at most, so that a walk of short pages ends soon.
        while (sizes.length < 2 * (Math.ceil(expected / LIMIT) + 1)) {
          const page = (await api(t).get(path).expect(200)).body as Page;
          sizes.push(page.data.length);
          for (const order of page.data) ids.push(order.id);
          if (!page.hasMore) break;
          path = `${first}&cursor=${page.nextCursor ?? ''}`;
        }
        const bound = Math.ceil(expected / LIMIT) + 1;
        expect({ firstPageFull: sizes[0] >= 0.9 * Math.min(LIMIT, expected), sizes }).toEqual({
          firstPageFull: true,
          sizes,
        });
        expect({ walkedWithin: sizes.length <= bound, bound, sizes }).toEqual({
          walkedWithin: true,
          bound,
          sizes,
        });
        expect({ seen: new Set(ids).size, orders: ids.length }).toEqual({
          seen: expected,
          orders: expected,
        });
        if (sort === 'id' || sort === '-id') {
          const inOrder = [...ids].sort((a, b) => (sort === 'id' ? a - b : b - a));
          expect(ids).toEqual(inOrder);
        }
      },
    );
  });
});
