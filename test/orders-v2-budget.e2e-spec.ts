import { Pool, type PoolClient } from 'pg';
import { APPLICATION_NAME } from '../src/database/data-source-options';
import { AppProcess } from './support/app-process';
import { bearerFor } from './support/auth';
import { buildOnce } from './support/build';
import { eventually } from './support/eventually';
import { httpRequest } from './support/http';
import { createTestDatabase } from './support/test-app';

const BUDGET_MS = 300;

/**
 * A page's database time is bounded as a whole (PAGE_DATABASE_BUDGET_MS): a page made slow (the
 * orders table locked by another transaction, so its statement waits) is answered 503 with
 * Retry-After, logged once with its route and shape, and holds no connection afterwards.
 */
describe('the database budget of a v2 page', () => {
  jest.setTimeout(120_000);

  let db: Pool;
  let app: AppProcess;
  let url: string;
  let headers: Record<string, string>;

  beforeAll(async () => {
    await buildOnce();
    const databaseUrl = await createTestDatabase();
    db = new Pool({ connectionString: databaseUrl, max: 2 });
    await db.query(
      `INSERT INTO orders (pet_id, ship_date, status)
       SELECT g % 3, timestamptz '2026-11-01' + g * interval '1 hour', 'pending'
         FROM generate_series(1, 50) AS g`,
    );
    headers = await bearerFor(databaseUrl);
    ({ app, url } = await AppProcess.start(['node', 'dist/main.js'], {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'info',
      PAGE_DATABASE_BUDGET_MS: String(BUDGET_MS),
      // Far beyond the budget: only the budget can end the page's statement.
      DATABASE_STATEMENT_TIMEOUT_MS: '60000',
    }));
  }, 300_000);
  afterAll(async () => {
    await app.stop();
    await db.end();
  });

  /** The app's connections waiting on a lock, or in a transaction. */
  const heldConnections = async (): Promise<number> =>
    Number(
      (
        await db.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = $1
              AND (wait_event_type = 'Lock' OR state LIKE 'idle in transaction%'
                   OR (state = 'active' AND query LIKE '%FROM orders%'))`,
          [APPLICATION_NAME],
        )
      ).rows[0].n,
    );

  it('answers 503 with Retry-After, logs the route and shape once, and holds no connection', async () => {
    const page = `${url}/v2/store/orders?petId=1&status=pending&sort=-shipDate&limit=5`;
    expect((await httpRequest(page, { headers })).status).toBe(200);

    const locker: PoolClient = await db.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
      const res = await httpRequest(page, { headers });
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
      // The lock is still held: the page's statement was cancelled, not left waiting. PostgreSQL
      // sends the error before its backend reports itself idle, so the view may lag the answer
      // by a moment; a statement left waiting would still be there when the poll gives up.
      expect(await eventually(heldConnections, (held) => held === 0, 2_000)).toBe(0);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }

    // Log lines are written in batches: wait for it (the suite's timeout bounds the wait).
    await app.waitFor(/v2 page over its database budget/);
    const lines = app.json().filter((line) => line.msg === 'v2 page over its database budget');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      route: 'GET /v2/store/orders',
      shape: 'status(1)&petId; sort=-shipDate; page 1',
      budgetMs: BUDGET_MS,
    });
    expect(app.json().filter((line) => Number(line.level) >= 50)).toEqual([]);
    // And the pool serves the next page at once.
    expect((await httpRequest(page, { headers })).status).toBe(200);
  });
});
