import { join } from 'node:path';
import request from 'supertest';
import { environmentVariableNames, validateEnvironment } from '../src/config/environment';
import { applyMigrations } from '../src/database/apply-migrations';
import { api, expectErrorBody } from './support/client';
import { describeWithBinary } from './support/system-binary';
import { testAppPerSuite, twoInstancesPerSuite } from './support/suite-app';
import { createTestApp, createTestDatabase, TestApp } from './support/test-app';
import { WidgetsModule } from './fixtures/widgets/widgets.module';

const FIXTURE = join(__dirname, 'fixtures', 'widgets');
const RATE_LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

interface Document {
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, { operationId: string; description?: string }>>;
}

const limitOf = (res: { headers: Record<string, string> }): [number, number] => [
  Number(res.headers['x-ratelimit-limit']),
  Number(res.headers['x-ratelimit-remaining']),
];

/**
 * Applies the pending migrations as `migrate.ts` and the TypeORM CLI do, with the fixture's folder
 * beside the service's: what the glob of src/<feature>/migrations does for a module under src/.
 */
async function migrateWithFixture(databaseUrl: string): Promise<string[]> {
  const applied = await applyMigrations(
    databaseUrl,
    { connectTimeoutMs: 5_000, statementTimeoutMs: 0, poolSize: 1 },
    { lockTimeoutMs: 3_000, retries: 10, migrations: [join(FIXTURE, 'migrations', '*.{ts,js}')] },
  );
  return applied.map((m) => m.name);
}

/**
 * docs/extending.md's "a feature is one folder": the widgets fixture (test/fixtures/widgets) brings its
 * own setting, table, route limits and API version, and nothing under src/ names any of them.
 */
describe('a module owns its settings', () => {
  it('adds its variables to those validated at start, without a list kept in src/', () => {
    expect(environmentVariableNames()).toContain('WIDGETS_PER_CRATE');
    expect(environmentVariableNames()).toContain('PORT');
    expect(() => validateEnvironment({ WIDGETS_PER_CRATE: 'a dozen' })).toThrow(
      /WIDGETS_PER_CRATE must be an integer between 1 and 144/,
    );
    // Every bad variable at once, the service's and the module's.
    expect(() => validateEnvironment({ PORT: 'x', WIDGETS_PER_CRATE: '0' })).toThrow(
      /PORT must be an integer.*\n.*WIDGETS_PER_CRATE must be an integer/,
    );
    expect(validateEnvironment({ WIDGETS_PER_CRATE: '24' })).not.toHaveProperty(
      'WIDGETS_PER_CRATE',
    );
  });

  it('stops the application at start on a bad value, naming the variable', async () => {
    await expect(
      createTestApp({ imports: [WidgetsModule], env: { WIDGETS_PER_CRATE: '145' } }),
    ).rejects.toThrow(/WIDGETS_PER_CRATE must be an integer between 1 and 144/);
    expect(process.env.WIDGETS_PER_CRATE).toBeUndefined();
  });

  it('reads its setting, or its default, through its registerAs namespace', async () => {
    const configured = await createTestApp({
      imports: [WidgetsModule],
      env: { WIDGETS_PER_CRATE: '24' },
    });
    try {
      const res = await api(configured).get('/v1/widget-crates/packing').expect(200);
      expect(res.body).toEqual({ perCrate: 24 });
    } finally {
      await configured.close();
    }
    const defaulted = await createTestApp({ imports: [WidgetsModule] });
    try {
      const res = await api(defaulted).get('/v1/widget-crates/packing').expect(200);
      expect(res.body).toEqual({ perCrate: 12 });
    } finally {
      await defaulted.close();
    }
  });
});

describe('a module owns its entity and migration', () => {
  let t: TestApp;

  beforeAll(async () => {
    const databaseUrl = await createTestDatabase();
    // The service's migrations are in the template already: only the module's is pending.
    expect(await migrateWithFixture(databaseUrl)).toEqual(['CreateWidgetParts1764300000000']);
    t = await createTestApp({ imports: [WidgetsModule], databaseUrl });
  });
  afterAll(() => t.close());

  it('reads its table through its entity, registered by its module', async () => {
    const res = await api(t).get('/v1/widget-crates/parts').expect(200);
    expect(res.body).toEqual([{ id: '1', name: 'cog' }]);
    const { rows } = await t.db.query<{ name: string }>(
      `SELECT name FROM typeorm_migrations WHERE name = 'CreateWidgetParts1764300000000'`,
    );
    expect(rows).toHaveLength(1);
  });
});

/** The route limits a module may set, on one app (or two sharing Redis: `other`). */
function routeLimits(apps: () => { t: TestApp; other: TestApp }): void {
  it('counts a @Throttle route per key: the 4th request in its minute is 429, the headers show its window', async () => {
    const { t, other } = apps();
    const { key } = await t.keys.issue({ plan: 'pro' });
    for (let i = 1; i <= 3; i++) {
      const res = await api(i % 2 === 0 ? other : t, key)
        .get('/v1/widget-crates/inspection')
        .expect(200);
      // 3 a minute binds more than the pro plan's 300 a minute and 10,000 a day.
      expect(limitOf(res)).toEqual([3, 3 - i]);
    }
    const before = limitOf(await api(t, key).get('/v1/widgets/1').expect(200));
    const refused = await api(other, key).get('/v1/widget-crates/inspection').expect(429);
    expectErrorBody(refused, 429, 'RATE_LIMIT_EXCEEDED');
    expect(limitOf(refused)).toEqual([3, 0]);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The refused request consumed nothing of the plan's windows.
    const after = limitOf(await api(t, key).get('/v1/widgets/1').expect(200));
    expect(after).toEqual([300, before[1] - 1]);
    // Other routes are limited by the plan alone.
    expect(limitOf(await api(other, key).get('/v1/widget-crates/packing').expect(200))[0]).toBe(
      300,
    );
  });

  it('leaves a second key its own count of the route', async () => {
    const { t } = apps();
    const first = await t.keys.issue({ plan: 'pro' });
    const second = await t.keys.issue({ plan: 'pro' });
    for (let i = 0; i < 3; i++) await api(t, first.key).get('/v1/widget-crates/inspection');
    await api(t, first.key).get('/v1/widget-crates/inspection').expect(429);
    const res = await api(t, second.key).get('/v1/widget-crates/inspection').expect(200);
    expect(limitOf(res)).toEqual([3, 2]);
  });

  it("shows the plan's window when it binds more than the route's", async () => {
    const { t } = apps();
    const { key } = await t.keys.issue({
      plan: 'enterprise',
      limits: { perMinute: 2, perDay: 1_000 },
    });
    const res = await api(t, key).get('/v1/widget-crates/inspection').expect(200);
    // The route's window has 2 left, the key's minute 1.
    expect(limitOf(res)).toEqual([2, 1]);
    await api(t, key).get('/v1/widget-crates/inspection').expect(200);
    const refused = await api(t, key).get('/v1/widget-crates/inspection').expect(429);
    expect(limitOf(refused)).toEqual([2, 0]);
  });

  it('counts a @Public @Throttle route per client IP, and per key when one is sent', async () => {
    const { t, other } = apps();
    const from = (ip: string, app: TestApp = t) =>
      api(app, null).get('/v1/widget-crates/catalogue').set('X-Forwarded-For', ip);
    const ip = '198.51.100.7';
    expect(limitOf(await from(ip).expect(200))).toEqual([2, 1]);
    expect(limitOf(await from(ip, other).expect(200))).toEqual([2, 0]);
    const refused = await from(ip).expect(429);
    expectErrorBody(refused, 429, 'RATE_LIMIT_EXCEEDED');
    expect(refused.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(limitOf(await from('203.0.113.9').expect(200))).toEqual([2, 1]);
    const { key } = await t.keys.issue({ plan: 'free' });
    const keyed = await api(t, key)
      .get('/v1/widget-crates/catalogue')
      .set('X-Forwarded-For', ip)
      .expect(200);
    expect(limitOf(keyed)).toEqual([2, 1]);
  });

  it('neither counts nor shows a @SkipThrottle route, which still needs a key', async () => {
    const { t, other } = apps();
    const { key } = await t.keys.issue({ plan: 'free' });
    const before = limitOf(await api(t, key).get('/v1/widgets/1').expect(200));
    for (const app of [t, other, t]) {
      const res = await request(app.http)
        .get('/v1/widget-crates/status')
        .set('Authorization', `Bearer ${key}`)
        .expect(200);
      app.contract.check('get', '/v1/widget-crates/status', res);
      for (const header of RATE_LIMIT_HEADERS) expect(res.headers).not.toHaveProperty(header);
    }
    const after = limitOf(await api(t, key).get('/v1/widgets/1').expect(200));
    expect(after).toEqual([60, before[1] - 1]);

    const anonymous = await request(t.http).get('/v1/widget-crates/status').expect(401);
    t.contract.check('get', '/v1/widget-crates/status', anonymous);
    expectErrorBody(anonymous, 401, 'UNAUTHORIZED');
    for (const header of RATE_LIMIT_HEADERS) expect(anonymous.headers).not.toHaveProperty(header);
  });
}

describe('a module sets route limits: in-process counters', () => {
  const app = testAppPerSuite({ imports: [WidgetsModule], env: { TRUST_PROXY: 'loopback' } });

  routeLimits(() => ({ t: app.t, other: app.t }));
});

describeWithBinary('redis-server', 'redis-server')(
  'a module sets route limits: in Redis, shared by two instances',
  () => {
    const two = twoInstancesPerSuite({
      imports: [WidgetsModule],
      env: { TRUST_PROXY: 'loopback' },
      redis: true,
    });

    routeLimits(() => ({ t: two.a, other: two.b }));
  },
);

describe('a module brings an API version of its own', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ imports: [WidgetsModule] });
  });
  afterAll(() => t.close());

  it('serves it, and its document at /openapi/v3.json, declared in its folder', async () => {
    const res = await api(t).get('/v3/widgets/1').expect(200);
    expect(res.body).toEqual({ id: 1, name: 'sprocket' });
    const doc = (await request(t.http).get('/openapi/v3.json').expect(200)).body as Document;
    expect(doc.info).toMatchObject({ title: 'Widgets API', version: '3.0.0' });
    expect(doc.info.description).toMatch(/^Widgets, version 3 \(test only\)\./);
    expect(Object.keys(doc.paths)).toEqual(['/widgets/{id}']);
    expect(doc.paths['/widgets/{id}'].get.operationId).toBe('getWidgetV3');
  });

  it('leaves the v1 and v2 documents to their versions', async () => {
    const v1 = (await request(t.http).get('/openapi/v1.json').expect(200)).body as Document;
    const v2 = (await request(t.http).get('/openapi/v2.json').expect(200)).body as Document;
    expect(v1.info).toMatchObject({ title: 'Petstore API', version: '1.0.0' });
    expect(v2.info).toMatchObject({ title: 'Petstore API', version: '2.0.0' });
    expect(v1.paths['/widgets/{id}'].get.operationId).toBe('getWidget');
    expect(v2.paths).not.toHaveProperty('/widgets/{id}');
  });

  it("documents the routes' own limits and exemptions", async () => {
    const v1 = (await request(t.http).get('/openapi/v1.json').expect(200)).body as {
      paths: Record<
        string,
        {
          get: {
            description?: string;
            'x-rate-limit'?: unknown;
            responses: Record<string, { headers?: Record<string, unknown> }>;
          };
        }
      >;
    };
    const inspection = v1.paths['/widget-crates/inspection'].get;
    expect(inspection['x-rate-limit']).toEqual([{ limit: 3, periodSeconds: 60 }]);
    expect(inspection.description).toContain('at most 3 requests per 60 seconds per key');
    const status = v1.paths['/widget-crates/status'].get;
    expect(status.responses).not.toHaveProperty('429');
    expect(Object.keys(status.responses['200'].headers ?? {})).not.toContain('X-RateLimit-Limit');
    expect(Object.keys(status.responses['401'].headers ?? {})).toContain('WWW-Authenticate');
  });
});
