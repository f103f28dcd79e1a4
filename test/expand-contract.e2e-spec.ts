import { DataSource } from 'typeorm';
import { applyMigrations } from '../src/database/apply-migrations';
import type { DatabaseSettings } from '../src/database/data-source-options';
import { dataSourceOptions } from '../src/database/data-source-options';
import { ContractOrderPriorities1765100000000 } from './fixtures/order-priorities/migrations/1765100000000-contract-order-priorities';
import { ExpandOrderPriorities1765000000000 } from './fixtures/order-priorities/migrations/1765000000000-expand-order-priorities';
import { backfillOrderPriorities } from './fixtures/order-priorities/order-priorities.backfill';
import { OrderPrioritiesModule } from './fixtures/order-priorities/order-priorities.module';
import { api } from './support/client';
import { insertOrders } from './support/orders';
import { createTestApp, TestApp } from './support/test-app';

const MIGRATION: DatabaseSettings = { connectTimeoutMs: 5_000, statementTimeoutMs: 0, poolSize: 1 };
const EXPAND = [ExpandOrderPriorities1765000000000];
const CONTRACT = [ExpandOrderPriorities1765000000000, ContractOrderPriorities1765100000000];

/** Pages and cancels against `app` until stopped: how many answered, and the unexpected ones. */
function steadyLoad(
  app: TestApp,
  orderIds: string[],
): { stop(): Promise<{ answered: number; failures: string[] }> } {
  const client = api(app);
  const failures: string[] = [];
  let answered = 0;
  const state = { running: true };
  const record = async (label: string, send: PromiseLike<{ status: number }>, ok: number) => {
    const { status } = await send;
    answered++;
    if (status !== ok) failures.push(`${label}: ${status}`);
  };
  const cancels = (async () => {
    for (const id of orderIds) {
      if (!state.running) return;
      await record(`cancel ${id}`, client.delete(`/v2/store/orders/${id}`), 204);
    }
  })();
  const pages = (async () => {
    while (state.running) await record('page', client.get('/v2/store/orders?limit=25'), 200);
  })();
  return {
    async stop() {
      state.running = false;
      await Promise.all([cancels, pages]);
      return { answered, failures };
    },
  };
}

async function priorityOf(app: TestApp, id: string): Promise<string> {
  const res = await api(app).get(`/v1/order-priorities/${id}`).expect(200);
  return (res.body as { priority: string }).priority;
}

describe('a release that adds a module and a column to orders, expanded then contracted', () => {
  it('runs on the schema the release before serves, rolls back and forward, with no failed request', async () => {
    const current = await createTestApp();
    const { databaseUrl, db } = current;
    let next: TestApp | undefined;
    const backfill = new DataSource(dataSourceOptions(databaseUrl, { ...MIGRATION, poolSize: 2 }));
    try {
      const [small, large] = await insertOrders(db, [{ quantity: 2 }, { quantity: 12 }]);
      const others = await insertOrders(
        db,
        Array.from({ length: 240 }, (_, i) => ({ quantity: i % 20 })),
      );
      const load = steadyLoad(current, others);

      // 1. Expand while the current release serves.
      await applyMigrations(databaseUrl, MIGRATION, {
        lockTimeoutMs: 3_000,
        retries: 10,
        migrations: EXPAND,
      });

      // 2. The next release comes up beside it and reads both shapes before any backfill.
      next = await createTestApp({ databaseUrl, imports: [OrderPrioritiesModule] });
      expect(await priorityOf(next, large)).toBe('rush');
      expect(await priorityOf(next, small)).toBe('normal');
      const [placedNow] = await insertOrders(db, [{ quantity: 50 }]);
      expect(await priorityOf(next, placedNow)).toBe('normal');

      // Rolled back (the current release alone on the expanded schema), then forward again.
      await next.close();
      await api(current).get('/v1/store/orders').expect(200);
      next = await createTestApp({ databaseUrl, imports: [OrderPrioritiesModule] });

      // 3. The backfill, in batches, outside any migration, while both serve.
      await backfill.initialize();
      const batches = await backfillOrderPriorities(backfill, 50);
      expect(batches).toBeGreaterThan(4);
      const { rows: unset } = await db.query('SELECT id FROM orders WHERE priority IS NULL');
      expect(unset).toEqual([]);
      const { rows: stored } = await db.query<{ priority: string }>(
        'SELECT priority FROM orders WHERE id = $1',
        [large],
      );
      expect(stored[0].priority).toBe('rush');

      // 4. The contract migration of the release after, while both still serve.
      const contracted = await applyMigrations(databaseUrl, MIGRATION, {
        lockTimeoutMs: 3_000,
        retries: 10,
        migrations: CONTRACT,
      });
      expect(contracted.map((m) => m.name)).toEqual(['ContractOrderPriorities1765100000000']);
      const { rows: checks } = await db.query<{ convalidated: boolean }>(
        `SELECT convalidated FROM pg_constraint WHERE conname = 'CHK_orders_priority_set'`,
      );
      expect(checks).toEqual([{ convalidated: true }]);
      await expect(
        db.query('INSERT INTO orders (quantity, priority) VALUES (1, NULL)'),
      ).rejects.toThrow(/CHK_orders_priority_set/);
      // The store's other writers, which never name the column, still insert.
      await insertOrders(db, [{ quantity: 3 }]);
      expect(await priorityOf(next, large)).toBe('rush');

      const { answered, failures } = await load.stop();
      expect(failures).toEqual([]);
      expect(answered).toBeGreaterThan(100);
    } finally {
      if (backfill.isInitialized) await backfill.destroy();
      await next?.close();
      await current.close();
    }
  });
});
