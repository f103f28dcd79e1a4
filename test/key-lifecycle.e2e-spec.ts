import 'reflect-metadata';
import { DataSource, MigrationInterface } from 'typeorm';
import { ApiKey } from '../src/auth/api-key.entity';
import { dataSourceOptions } from '../src/database/data-source-options';
import { CreateApiKeys1763800100000 } from '../src/auth/migrations/1763800100000-create-api-keys';
import { ApiKeyLifecycle1763900000000 } from '../src/auth/migrations/1763900000000-api-key-lifecycle';
import { ApiKeyScopes1764200000000 } from '../src/auth/migrations/1764200000000-api-key-scopes';
import { api, expectErrorBody } from './support/client';
import { eventually } from './support/eventually';
import { twoInstancesPerSuite } from './support/suite-app';
import { createTestDatabase, TestApp } from './support/test-app';
import { withClient } from './setup/clusters';

const EXPIRED =
  'Bearer realm="store-orders", error="invalid_token", error_description="The access token expired"';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Waits until the wall clock has passed `at` (by a margin for the clocks' granularity). */
const until = async (at: Date): Promise<void> => sleep(Math.max(0, at.getTime() - Date.now() + 20));

async function expectExpired(t: TestApp, key: string): Promise<void> {
  const res = await api(t, key).get('/v1/store/orders').expect(401);
  expectErrorBody(res, 401, 'UNAUTHORIZED');
  expect(res.headers['www-authenticate']).toBe(EXPIRED);
}

/**
 * The key cache's trust window (KEY_CACHE_TTL_MS), set short so that the suite waits it out in a
 * couple of seconds rather than the default 5: what it proves holds for any window.
 */
const KEY_CACHE_TTL_MS = 2_000;

const enterprise = (perMinute: number) =>
  ({ plan: 'enterprise', limits: { perMinute, perDay: 100_000 } }) as const;

describe('key lifecycle over HTTP', () => {
  // Two instances on one database, as behind a load balancer.
  const two = twoInstancesPerSuite({
    env: {
      RATE_LIMIT_BAN_AFTER: '2',
      RATE_LIMIT_BAN_SECONDS: '600',
      KEY_CACHE_TTL_MS: String(KEY_CACHE_TTL_MS),
    },
  });

  it('refuses an expired key with error_description on every instance, though both had it cached', async () => {
    // Less than the key cache's window away: the cache holds it past its expiry, feed or not.
    const expiresAt = new Date(Date.now() + KEY_CACHE_TTL_MS - 500);
    const { key } = await two.a.keys.issue({ plan: 'pro', expiresAt });
    // Cached by both instances now, for longer than the key has left.
    await api(two.a, key).get('/v1/store/orders').expect(200);
    await api(two.b, key).get('/v1/store/orders').expect(200);

    await until(expiresAt);
    await expectExpired(two.a, key);
    await expectExpired(two.b, key);
    // And still after the cache entries lapse and the database is asked again.
    await sleep(KEY_CACHE_TTL_MS + 100);
    await expectExpired(two.a, key);
  });

  it('counts requests with an expired key against the client IP, like any invalid key', async () => {
    const { key } = await two.a.keys.issue({
      plan: 'pro',
      expiresAt: new Date(Date.now() + 1_000),
    });
    await sleep(1_050);
    const res = await api(two.a, key).get('/v1/store/orders').expect(401);
    // The free plan's anonymous window (60 a minute), not the pro key's 300.
    expect(res.headers['x-ratelimit-limit']).toBe('60');
  });

  it('rotates a key: both work during the grace period, sharing one budget, then the old one expires', async () => {
    const old = await two.a.keys.issue({ ...enterprise(10), name: 'rotating' });
    for (let i = 0; i < 6; i++) await api(two.a, old.key).get('/v1/store/orders').expect(200);

    // A grace period longer than the key cache's window: every instance has read the old key's
    // new expiry by the time it ends (announced at once, or within the window without the key
    // changes feed), so it ends on the dot.
    const { issued, previous } = await two.a.keys.rotate(old.id, KEY_CACHE_TTL_MS + 2_000);
    expect(issued).toMatchObject({
      name: 'rotating',
      plan: 'enterprise',
      limits: { perMinute: 10, perDay: 100_000 },
      familyId: old.id,
      expiresAt: null,
    });
    expect(issued.key).not.toBe(old.key);
    expect(previous.expiresAt?.getTime()).toBeGreaterThan(Date.now());

    // The replacement carries on from the old key's count (in-process counters: on one
    // instance; across instances with Redis below): 4 left of 10, not a fresh 10.
    const first = await api(two.a, issued.key).get('/v1/store/orders').expect(200);
    expect(first.headers['x-ratelimit-remaining']).toBe('3');
    await api(two.a, old.key).get('/v1/store/orders').expect(200);
    await api(two.b, old.key).get('/v1/store/orders').expect(200);
    await api(two.a, issued.key).get('/v1/store/orders').expect(200);
    await api(two.a, old.key).get('/v1/store/orders').expect(200);
    const over = await api(two.a, issued.key).get('/v1/store/orders').expect(429);
    expectErrorBody(over, 429, 'RATE_LIMIT_EXCEEDED');
    const overOld = await api(two.a, old.key).get('/v1/store/orders').expect(429);
    expectErrorBody(overOld, 429, 'RATE_LIMIT_EXCEEDED');

    await until(previous.expiresAt as Date);
    await expectExpired(two.a, old.key);
    await expectExpired(two.b, old.key);
    // The new key lives on (on two.b, whose in-process counters have room).
    await api(two.b, issued.key).get('/v1/store/orders').expect(200);
  });

  it('shares a ban between a key and its replacement; unbanning either lifts it for both', async () => {
    const old = await two.a.keys.issue(enterprise(2));
    await api(two.a, old.key).get('/v1/store/orders').expect(200);
    await api(two.a, old.key).get('/v1/store/orders').expect(200);
    // 2 rejections are tolerated; the third is the ban.
    for (let i = 0; i < 2; i++) await api(two.a, old.key).get('/v1/store/orders').expect(429);
    const ban = await api(two.a, old.key).get('/v1/store/orders').expect(429);
    expectErrorBody(ban, 429, 'API_KEY_BANNED');

    // Rotating does not escape it: the new key is banned from its first request, on any instance.
    const { issued } = await two.a.keys.rotate(old.id, 60_000);
    for (const t of [two.a, two.b]) {
      const res = await api(t, issued.key).get('/v1/store/orders').expect(429);
      expectErrorBody(res, 429, 'API_KEY_BANNED');
    }

    // Unbanned through the new key's id: the old key is free again too (within the cache's window),
    // though still over its shared minute.
    await two.a.keys.unban(issued.id);
    for (const key of [old.key, issued.key]) {
      const res = await eventually(
        () => api(two.a, key).get('/v1/store/orders'),
        (r) => (r.body as { code?: string }).code !== 'API_KEY_BANNED',
        10_000,
      );
      expectErrorBody(res, 429, 'RATE_LIMIT_EXCEEDED');
    }
  });

  it('writes last use at most once a minute per key under load, however many requests', async () => {
    // Every write of last_used_at, counted by the database itself.
    await two.a.db.query(`
      CREATE TABLE last_use_writes (key_id uuid NOT NULL);
      CREATE FUNCTION log_last_use() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN INSERT INTO last_use_writes VALUES (NEW.id); RETURN NEW; END $$;
      CREATE TRIGGER log_last_use AFTER UPDATE OF last_used_at ON api_keys
        FOR EACH ROW EXECUTE FUNCTION log_last_use();`);
    const writes = async (id: string): Promise<number> =>
      Number(
        (
          await two.a.db.query<{ n: string }>(
            'SELECT count(*) AS n FROM last_use_writes WHERE key_id = $1',
            [id],
          )
        ).rows[0].n,
      );
    const { id, key } = await two.a.keys.issue(enterprise(100_000));
    const burst = async (): Promise<void> => {
      const statuses = await Promise.all(
        Array.from(
          { length: 200 },
          async () => (await api(two.a, key).get('/v1/store/orders')).status,
        ),
      );
      expect(new Set(statuses)).toEqual(new Set([200]));
    };

    await burst();
    await eventually(
      () => writes(id),
      (n) => n > 0,
      10_000,
    );
    // Past the key cache's window: the next burst finds the key still cached (the key changes
    // feed is up) or looks it up again; either way, no second write within the minute.
    await sleep(KEY_CACHE_TTL_MS + 100);
    await burst();
    await sleep(1_000);
    expect(await writes(id)).toBe(1);
    const { rows } = await two.a.db.query<{ last_used_at: Date | null }>(
      'SELECT last_used_at FROM api_keys WHERE id = $1',
      [id],
    );
    expect(rows[0].last_used_at?.getTime()).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('the key lifecycle migration', () => {
  it('leaves existing keys never expiring, each heading its own rotation family', async () => {
    const copy = await createTestDatabase();
    // The test databases are migrated copies: start from an empty one instead.
    const name = `bare_${copy.split('/').pop() as string}`;
    await withClient(copy, (c) => c.query(`CREATE DATABASE ${name}`));
    const empty = copy.replace(/[^/]+$/, name);

    const migrate = async (migrations: (new () => MigrationInterface)[]): Promise<DataSource> => {
      const ds = new DataSource({
        ...dataSourceOptions(empty, {
          connectTimeoutMs: 5000,
          statementTimeoutMs: 30000,
          poolSize: 1,
        }),
        // Only the keys table is here: the entity to compare it with is ApiKey alone.
        entities: [ApiKey],
        migrations,
      });
      await ds.initialize();
      await ds.runMigrations({ transaction: 'each' });
      return ds;
    };

    const before = await migrate([CreateApiKeys1763800100000]);
    const [{ id }] = await before.query<{ id: string }[]>(
      `INSERT INTO api_keys (prefix, key_hash, plan) VALUES ('sk_old', repeat('a', 64), 'free') RETURNING id`,
    );
    await before.destroy();

    // With the later migrations that add columns to api_keys, so that the entity can be compared.
    const after = await migrate([
      CreateApiKeys1763800100000,
      ApiKeyLifecycle1763900000000,
      ApiKeyScopes1764200000000,
    ]);
    try {
      const [row] = await after.query<{ expires_at: Date | null; family_id: string }[]>(
        'SELECT expires_at, family_id FROM api_keys WHERE id = $1',
        [id],
      );
      expect(row).toEqual({ expires_at: null, family_id: null });
      // And the entity agrees with the migrated schema: nothing left for migration:generate.
      const { upQueries } = await after.driver.createSchemaBuilder().log();
      expect(upQueries.map((q) => q.query)).toEqual([]);
    } finally {
      await after.destroy();
    }
  });
});
