import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyMigrations } from '../src/database/apply-migrations';
import { MetricsServer } from '../src/metrics/metrics.server';
import { ExpandOrderPriorities1765000000000 } from './fixtures/order-priorities/migrations/1765000000000-expand-order-priorities';
import { AppProcess } from './support/app-process';
import { buildOnce } from './support/build';
import { httpRequest } from './support/http';
import { createTestApp, createTestDatabase, TestApp } from './support/test-app';
import { withClient } from './setup/clusters';

/** The built service (`npm run build`, once per run), as `npm start` runs it. */
const START_BUILT = ['node', 'dist/main.js'];
const VERSION = (
  JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;

/** The migrations recorded as applied, newest (by timestamp) first. */
async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  return withClient(databaseUrl, async (c) =>
    (
      await c.query<{ name: string }>('SELECT name FROM typeorm_migrations ORDER BY timestamp DESC')
    ).rows.map((r) => r.name),
  );
}

/** A copy of the test database as the previous release left it: its newest migration undone. */
async function databaseBehindThisRelease(): Promise<{ databaseUrl: string; missing: string }> {
  const databaseUrl = await createTestDatabase();
  const [missing] = await appliedMigrations(databaseUrl);
  await withClient(databaseUrl, (c) =>
    c.query('DELETE FROM typeorm_migrations WHERE name = $1', [missing]),
  );
  return { databaseUrl, missing };
}

async function buildInfo(t: TestApp): Promise<string[]> {
  const res = await httpRequest(`http://127.0.0.1:${t.app.get(MetricsServer).port ?? '?'}/metrics`);
  expect(res.status).toBe(200);
  return res.body.split('\n').filter((line) => line.startsWith('store_orders_build_info'));
}

describe('what a release runs on', () => {
  it("reports its version and the schema's latest migration in store_orders_build_info", async () => {
    const t = await createTestApp({ env: { METRICS_PORT: '0' } });
    try {
      const [latest] = await appliedMigrations(t.databaseUrl);
      expect(await buildInfo(t)).toEqual([
        `store_orders_build_info{version="${VERSION}",schema="${latest}"} 1`,
      ]);
    } finally {
      await t.close();
    }
  });

  it('refuses to start on a schema that lacks one of its migrations, naming it', async () => {
    const { databaseUrl, missing } = await databaseBehindThisRelease();
    await expect(createTestApp({ databaseUrl })).rejects.toThrow(
      new RegExp(`The database lacks the migration this release needs: ${missing}\\b`),
    );
  });

  it('exits at start, with a fatal log line naming the missing migration', async () => {
    await buildOnce();
    const { databaseUrl, missing } = await databaseBehindThisRelease();
    const failed = await AppProcess.start(START_BUILT, {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'info',
    }).then(
      () => new Error('it started'),
      (error: unknown) => error as Error,
    );
    const fatal = failed.message.split('\n').find((line) => line.includes('"level":60'));
    expect(failed.message).toMatch(/^exited before listening \(\{"code":1,/);
    expect(JSON.parse(fatal ?? '{}')).toMatchObject({
      msg: 'Failed to start',
      err: {
        message: expect.stringContaining(
          `The database lacks the migration this release needs: ${missing}.`,
        ) as unknown,
      },
    });
  }, 300_000);

  it('starts on a schema one release ahead, and reports that schema', async () => {
    const databaseUrl = await createTestDatabase();
    await applyMigrations(
      databaseUrl,
      { connectTimeoutMs: 5_000, statementTimeoutMs: 0, poolSize: 1 },
      { lockTimeoutMs: 3_000, retries: 10, migrations: [ExpandOrderPriorities1765000000000] },
    );
    const t = await createTestApp({ databaseUrl, env: { METRICS_PORT: '0' } });
    try {
      expect(await buildInfo(t)).toEqual([
        `store_orders_build_info{version="${VERSION}",schema="ExpandOrderPriorities1765000000000"} 1`,
      ]);
      const res = await httpRequest(`${await listenUrl(t)}/v1/store/orders`, {
        headers: { Authorization: `Bearer ${t.key}` },
      });
      expect(res.status).toBe(200);
    } finally {
      await t.close();
    }
  });
});

async function listenUrl(t: TestApp): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  return t.app.getUrl();
}
