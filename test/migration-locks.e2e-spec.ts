import { Client } from 'pg';
import { applyMigrations, type MigrationRun } from '../src/database/apply-migrations';
import type { DatabaseSettings } from '../src/database/data-source-options';
import { ExpandOrderPriorities1765000000000 } from './fixtures/order-priorities/migrations/1765000000000-expand-order-priorities';
import { eventually } from './support/eventually';
import { insertOrders } from './support/orders';
import { testAppPerSuite } from './support/suite-app';
import { createTestDatabase } from './support/test-app';

const MIGRATION: DatabaseSettings = { connectTimeoutMs: 5_000, statementTimeoutMs: 0, poolSize: 1 };
const ALTERS_ORDERS = [ExpandOrderPriorities1765000000000];

/** A reader in the middle of a long list: its cursor holds an ACCESS SHARE lock on `orders`. */
async function openListReader(databaseUrl: string): Promise<Client> {
  const reader = new Client({ connectionString: databaseUrl });
  await reader.connect();
  await reader.query('BEGIN');
  await reader.query('DECLARE list CURSOR FOR SELECT id FROM orders ORDER BY id');
  await reader.query('FETCH 10 FROM list');
  return reader;
}

async function hasPriorityColumn(client: { query: Client['query'] }): Promise<boolean> {
  const { rows } = await client.query(
    `SELECT 1 FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'priority'`,
  );
  return rows.length === 1;
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

describe('a migration behind a long read of orders', () => {
  const app = testAppPerSuite();

  it('gives up its lock wait and tries again while cancels and pages answer, then completes once the read ends', async () => {
    const { t, client } = app;
    const ids = await insertOrders(
      t.db,
      Array.from({ length: 300 }, () => ({ status: 'pending' as const })),
    );
    const reader = await openListReader(t.databaseUrl);
    let readerEnded = false;

    // Traffic until the migration is done: one client cancelling, one reading pages.
    const latencies: number[] = [];
    const failures: string[] = [];
    const traffic = { on: true };
    const timed = async (
      label: string,
      send: () => PromiseLike<{ status: number }>,
      ok: number,
    ) => {
      const started = performance.now();
      const res = await send();
      latencies.push(performance.now() - started);
      if (res.status !== ok) failures.push(`${label}: ${res.status}`);
    };
    const cancels = (async () => {
      for (const id of ids) {
        if (!traffic.on) return;
        await timed(`cancel ${id}`, () => client.delete(`/v2/store/orders/${id}`), 204);
      }
    })();
    const pages = (async () => {
      while (traffic.on) {
        await timed('page', () => client.get('/v2/store/orders?limit=50'), 200);
      }
    })();

    let columnWhileReading: boolean | undefined;
    const attempts: number[] = [];
    let thirdRetry!: () => void;
    const retriedThrice = new Promise<void>((resolve) => (thirdRetry = resolve));
    const run: MigrationRun = {
      lockTimeoutMs: 200,
      retries: 10,
      migrations: ALTERS_ORDERS,
      onRetry: ({ attempt, error }) => {
        expect(error.message).toMatch(/lock timeout/);
        attempts.push(attempt);
        if (attempt === 3) thirdRetry();
      },
    };
    const migration = applyMigrations(t.databaseUrl, MIGRATION, run);
    try {
      await retriedThrice;
      // The p99 of fewer than a hundred answers would be the slowest of them: wait for 200.
      await eventually(
        () => Promise.resolve(latencies.length),
        (n) => n >= 200,
      );
      columnWhileReading = await hasPriorityColumn(t.db);
      const requestsWhileWaiting = latencies.length;
      await reader.query('COMMIT');
      readerEnded = true;
      const applied = await migration;
      traffic.on = false;
      await Promise.all([cancels, pages]);

      expect(applied.map((m) => m.name)).toEqual(['ExpandOrderPriorities1765000000000']);
      expect(columnWhileReading).toBe(false);
      expect(await hasPriorityColumn(t.db)).toBe(true);
      expect(attempts.slice(0, 3)).toEqual([1, 2, 3]);
      expect(requestsWhileWaiting).toBeGreaterThan(20);
      expect(failures).toEqual([]);
      expect(p99(latencies)).toBeLessThan(1_000);
    } finally {
      traffic.on = false;
      if (!readerEnded) await reader.query('ROLLBACK');
      await reader.end();
      await migration.catch(() => undefined);
    }
  });

  it('fails with the lock timeout once its retries are spent, leaving the schema as it was', async () => {
    const databaseUrl = await createTestDatabase();
    const reader = await openListReader(databaseUrl);
    const attempts: number[] = [];
    try {
      await expect(
        applyMigrations(databaseUrl, MIGRATION, {
          lockTimeoutMs: 100,
          retries: 2,
          migrations: ALTERS_ORDERS,
          onRetry: ({ attempt }) => attempts.push(attempt),
        }),
      ).rejects.toThrow(/lock timeout/);
      expect(await hasPriorityColumn(reader)).toBe(false);
    } finally {
      await reader.query('ROLLBACK');
      await reader.end();
    }
    expect(attempts).toEqual([1, 2]);
  });
});
