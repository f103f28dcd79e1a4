import { APPLICATION_NAME } from '../src/database/data-source-options';
import { ConnectionWaitExpiredError } from '../src/database/statement-pool';
import {
  OrderPagesRepository,
  WARM_UP_STATEMENTS,
} from '../src/orders/pages/order-pages.repository';
import { api } from './support/client';
import { insertOrders } from './support/orders';
import { createTestApp, TestApp } from './support/test-app';

/**
 * v2's pages run on connections of their own that carry a page's settings from their start, so
 * that a page is one statement: read-only, the planner settings, and the budget's statement
 * timeout (PAGE_DATABASE_BUDGET_MS less a quarter for the wait for a connection).
 */
describe("the connections of v2's pages", () => {
  let t: TestApp;
  let pages: OrderPagesRepository;

  beforeAll(async () => {
    t = await createTestApp({ env: { PAGE_DATABASE_BUDGET_MS: '400', PAGE_POOL_SIZE: '1' } });
    pages = t.app.get(OrderPagesRepository);
    await insertOrders(t.db, [{ petId: '1' }, { petId: '2' }, { petId: '3' }]);
  });
  afterAll(async () => {
    if (!pages.connections.pool.ended) await t.close();
  });

  it('carry the settings of a page from their start', async () => {
    const rows = await pages.connections.run(pages.connectWaitMs, (connection) =>
      connection.rows<Record<string, string>>(
        `SELECT current_setting('transaction_read_only') AS read_only,
                current_setting('statement_timeout') AS statement_timeout,
                current_setting('enable_seqscan') AS seqscan,
                current_setting('enable_bitmapscan') AS bitmapscan,
                current_setting('enable_sort') AS sort,
                current_setting('plan_cache_mode') AS plan_cache_mode`,
      ),
    );
    expect(rows[0]).toEqual({
      read_only: 'on',
      statement_timeout: '300ms',
      seqscan: 'off',
      bitmapscan: 'off',
      sort: 'off',
      plan_cache_mode: 'force_generic_plan',
    });
  });

  it('run a page as its statement alone, and stay out of any transaction', async () => {
    // The pool's one connection (PAGE_POOL_SIZE 1), told apart from the app's other connections
    // (the relay's transactions among them) by its server process.
    const [{ pid }] = await pages.connections.run(pages.connectWaitMs, (connection) =>
      connection.rows<{ pid: number }>('SELECT pg_backend_pid() AS pid'),
    );
    const res = await api(t).get('/v2/store/orders?limit=2&sort=-id').expect(200);
    expect((res.body as { data: unknown[] }).data).toHaveLength(2);
    const { rows } = await t.db.query<{ state: string; query: string }>(
      `SELECT state, query FROM pg_stat_activity WHERE pid = $1 AND application_name = $2`,
      [pid, APPLICATION_NAME],
    );
    // The page's connection last ran the page's statement: no BEGIN, SET or ROLLBACK around it.
    expect(rows).toEqual([
      {
        state: 'idle',
        query: expect.stringMatching(/^SELECT id, pet_id, quantity, to_char/) as unknown,
      },
    ]);
  });

  it('are waited for no longer than the budget allows, and one that comes late is kept', async () => {
    let giveBack = (): void => undefined;
    const held = pages.connections.run(
      pages.connectWaitMs,
      () => new Promise<void>((resolve) => (giveBack = resolve)),
    );
    try {
      await expect(
        pages.connections.run(pages.connectWaitMs, () => Promise.resolve()),
      ).rejects.toBeInstanceOf(ConnectionWaitExpiredError);
    } finally {
      giveBack();
      await held;
    }
    // The late connection went back to the pool: the next page gets it.
    await api(t).get('/v2/store/orders?limit=2').expect(200);
    expect(pages.connections.pool.totalCount).toBe(1);
  });

  it('are closed with the application', async () => {
    await t.close();
    expect(pages.connections.pool.ended).toBe(true);
    expect(pages.connections.pool.totalCount).toBe(0);
  });
});

/**
 * Opening a connection (TCP and a SCRAM login) can outlast a page's wait for one on a busy machine:
 * a page that waited for it was answered 503 in the 30-minute soak although nothing was overloaded.
 */
describe("the connections of v2's pages, before the first page", () => {
  let t: TestApp;
  let pages: OrderPagesRepository;

  beforeAll(async () => {
    t = await createTestApp({ env: { PAGE_POOL_SIZE: '3' } });
    pages = t.app.get(OrderPagesRepository);
  });
  afterAll(() => t.close());

  it('are opened and warmed before the application is up, and kept open while idle', async () => {
    // Awaited by the application's start: nothing to wait for here.
    expect(pages.connections.pool.idleCount).toBe(3);
    const last = WARM_UP_STATEMENTS[WARM_UP_STATEMENTS.length - 1].text;
    const { rows } = await t.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = $1
          AND backend_type = 'client backend' AND pid <> pg_backend_pid()
          AND state = 'idle' AND left(query, 200) = left($2, 200)`,
      [APPLICATION_NAME, last],
    );
    // Each ran the warm-up, to its last page statement.
    expect(Number(rows[0].n)).toBeGreaterThanOrEqual(3);
    // pg's pools close a connection idle for 10 s unless told otherwise; these are told.
    expect(pages.connections.pool.options.idleTimeoutMillis).toBe(0);
  });
});
