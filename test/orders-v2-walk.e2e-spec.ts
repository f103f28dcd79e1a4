import { api } from './support/client';
import { createTestApp, TestApp } from './support/test-app';

const INITIAL_ORDERS = 1500;
const LIMIT = 37;
/**
 * Orders whose status the store's activity changes in one walk, at most: its writes race the
 * walk, and on a busy machine they could take so many of the 750 pending orders that a filtered
 * walk is left fewer than the 300 it must check. Orders are still placed after that.
 */
const MAX_STATUS_CHANGES = 400;

interface Page {
  data: { id: number }[];
  hasMore: boolean;
  nextCursor?: string;
}

/** A sort key: ship date in microseconds since the epoch (null: none), and id. */
interface Key {
  shipDate: bigint | null;
  id: bigint;
}

/** Compares two orders in the order of `sort`: undated last in both shipDate sorts. */
function compare(sort: string, a: Key, b: Key): number {
  const sign = sort.startsWith('-') ? -1 : 1;
  const byId = a.id === b.id ? 0 : a.id < b.id ? -sign : sign;
  if (sort === 'id' || sort === '-id') return byId;
  if (a.shipDate === null || b.shipDate === null) {
    if (a.shipDate !== b.shipDate) return a.shipDate === null ? 1 : -1;
    return byId;
  }
  if (a.shipDate !== b.shipDate) return a.shipDate < b.shipDate ? -sign : sign;
  return byId;
}

interface Snapshot {
  key: Key;
  status: string;
  complete: boolean;
}

/** Whether an order in `state` matches the filters of `query` (status and complete). */
function matches(query: string, state: Snapshot | undefined): boolean {
  const params = new URLSearchParams(query);
  const status = params.get('status');
  const complete = params.get('complete');
  return (
    state !== undefined &&
    (status === null || status.split(',').includes(state.status)) &&
    (complete === null || String(state.complete) === complete)
  );
}

/**
 * v2's exactly-once rule (docs/api.md), under fire: every page of every sort is walked while another
 * connection places, cancels and ships orders (some shipments also set a ship date: a sort key
 * that changes). Every order that matched throughout the walk and whose sort key did not change
 * must come exactly once, in sort order.
 */
describe('walking every page while orders are placed, cancelled and shipped', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  /** Keys of every order now, and the statuses. */
  async function snapshot(): Promise<Map<string, Snapshot>> {
    const { rows } = await t.db.query<{
      id: string;
      micros: string | null;
      status: string;
      complete: boolean;
    }>(
      `SELECT id, (extract(epoch FROM ship_date) * 1000000)::int8 AS micros, status, complete
         FROM orders`,
    );
    return new Map(
      rows.map((r) => [
        r.id,
        {
          key: { id: BigInt(r.id), shipDate: r.micros === null ? null : BigInt(r.micros) },
          status: r.status,
          complete: r.complete,
        },
      ]),
    );
  }

  /** Writes of the rest of the store; records the orders whose sort key or status changed. */
  function storeActivity() {
    const keyChanged = new Set<string>();
    const statusChanged = new Set<string>();
    let writes = 0;
    const step = async (): Promise<void> => {
      const n = Math.floor(Math.random() * 4);
      // Place: ship dates anywhere in the range, some none, some equal to others'.
      await t.db.query(
        `INSERT INTO orders (pet_id, ship_date, status)
         SELECT 1, CASE WHEN random() < 0.2 THEN NULL
                        ELSE timestamptz '2026-11-01' + floor(random() * 60) * interval '1 hour' END,
                'pending'
           FROM generate_series(0, $1::int)`,
        [n],
      );
      if (statusChanged.size >= MAX_STATUS_CHANGES) {
        writes += 1;
        return;
      }
      const cancelled = await t.db.query<{ id: string }>(
        `UPDATE orders SET status = 'cancelled' WHERE id IN (
           SELECT id FROM orders WHERE status = 'pending' ORDER BY random() LIMIT 2)
         RETURNING id`,
      );
      const shipped = await t.db.query<{ id: string }>(
        `UPDATE orders SET status = 'shipped', complete = true WHERE id IN (
           SELECT id FROM orders WHERE status = 'pending' ORDER BY random() LIMIT 2)
         RETURNING id`,
      );
      // A shipment that sets the ship date: the order's key moves in the shipDate sorts.
      const dated = await t.db.query<{ id: string }>(
        `UPDATE orders SET status = 'shipped', ship_date = timestamptz '2026-11-01'
                + floor(random() * 60) * interval '1 hour'
          WHERE id IN (SELECT id FROM orders WHERE status = 'pending' ORDER BY random() LIMIT 1)
         RETURNING id`,
      );
      for (const { id } of [...cancelled.rows, ...shipped.rows, ...dated.rows]) {
        statusChanged.add(id);
      }
      for (const { id } of dated.rows) keyChanged.add(id);
      writes += 1;
    };
    const state = { running: true };
    // In the background, racing the page requests, as well as between pages.
    const background = (async () => {
      while (state.running) await step();
    })();
    return {
      keyChanged,
      statusChanged,
      step,
      get writes() {
        return writes;
      },
      stop: async () => {
        state.running = false;
        await background;
      },
    };
  }

  /**
   * The last three match one order in twenty or none, fewer than a page's scan examines per
   * page: their pages are short, or empty, with more to come (docs/api.md), and the walk still
   * sees each order once.
   */
  it.each([
    ['sort=id', 1000],
    ['sort=-id', 1000],
    ['sort=shipDate', 1000],
    ['sort=-shipDate', 1000],
    ['status=pending&sort=shipDate', 300],
    ['status=pending&sort=-shipDate', 300],
    ['status=pending&sort=-id', 300],
    ['complete=true&sort=id', 40],
    ['complete=true&sort=-shipDate', 40],
    ['status=cancelled&complete=true&sort=shipDate', 0],
  ])('?%s visits every steady order exactly once, in order', async (query, atLeast) => {
    await t.db.query('TRUNCATE orders');
    await t.db.query(
      `INSERT INTO orders (pet_id, ship_date, status, complete)
       SELECT g % 7, CASE WHEN g % 5 = 0 THEN NULL
                          ELSE timestamptz '2026-11-01' + (g % 50) * interval '1 hour' END,
              (ARRAY['pending', 'pending', 'shipped', 'cancelled'])[g % 4 + 1],
              g % 20 = 2
         FROM generate_series(1, $1::int) AS g`,
      [INITIAL_ORDERS],
    );
    const sort = new URLSearchParams(query).get('sort') ?? 'id';
    const filtered = /status|complete/.test(query);
    const shortPages = atLeast < 100;
    // Small pages there, whose scans examine few orders each: many pages, many writes between.
    const limit = shortPages ? 5 : LIMIT;
    const before = await snapshot();

    const activity = storeActivity();
    const visited: string[] = [];
    let short = 0;
    try {
      let cursor: string | undefined;
      for (;;) {
        const url = `/v2/store/orders?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
        const page = (await api(t).get(url).expect(200)).body as Page;
        // JSON.parse keeps these ids exact: they are far below 2^53.
        visited.push(...page.data.map((order) => String(order.id)));
        if (!page.hasMore) break;
        if (page.data.length < limit) short += 1;
        cursor = page.nextCursor;
        await activity.step();
      }
    } finally {
      await activity.stop();
    }
    const after = await snapshot();
    expect(activity.writes).toBeGreaterThan(INITIAL_ORDERS / LIMIT / 2);
    expect(visited.length).toBeGreaterThanOrEqual(atLeast);

    // No order whose key stayed comes twice, and they come in sort order. (An order whose key
    // moved may come again at its new place: docs/api.md promises nothing for it.)
    const steady = visited.filter((id) => !activity.keyChanged.has(id));
    expect(steady.length).toBe(new Set(steady).size);
    for (let i = 1; i < steady.length; i++) {
      const a = after.get(steady[i - 1]);
      const b = after.get(steady[i]);
      expect(a && b && compare(sort, a.key, b.key) < 0).toBe(true);
    }

    // Every order that matched throughout and kept its key, exactly once.
    const seen = new Set(visited);
    const mustSee = [...before.keys()].filter(
      (id) =>
        !activity.keyChanged.has(id) &&
        (!filtered || (matches(query, before.get(id)) && !activity.statusChanged.has(id))),
    );
    expect(mustSee.length).toBeGreaterThanOrEqual(atLeast);
    expect(mustSee.filter((id) => !seen.has(id))).toEqual([]);
    if (filtered) {
      // Nothing that never matched during the walk.
      const neverMatched = visited.filter(
        (id) => !matches(query, before.get(id)) && !matches(query, after.get(id)),
      );
      expect(neverMatched.filter((id) => before.has(id))).toEqual([]);
    }
    if (shortPages) expect(short).toBeGreaterThan(0);
  });
});
