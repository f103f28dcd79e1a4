import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { READINESS_INTERVAL_MS } from '../src/health/readiness';
import { MetricsService } from '../src/metrics/metrics.service';
import { ENV, pgCtl } from './setup/clusters';
import { bearerFor } from './support/auth';
import { api, expectErrorBody } from './support/client';
import { eventually } from './support/eventually';
import { httpRequest } from './support/http';
import { PostgresStatementCounter } from './support/postgres-statement-counter';
import { RedisServer } from './support/redis-server';
import { describeWithBinary } from './support/system-binary';
import { createTestApp, createTestDatabase, listen, TestApp } from './support/test-app';

/**
 * Readiness follows the dependencies, and the service recovers without a restart. This suite
 * stops and starts its own PostgreSQL cluster (not the one other suites use).
 */
const databaseUrl = process.env[ENV.readinessUrl] ?? '';
const dataDir = process.env[ENV.readinessDataDir] ?? '';
const port = new URL(databaseUrl || 'postgres://x:1').port;

const startDatabase = (): void => pgCtl(dataDir, ['-o', `-p ${port}`, 'start']);
const stopDatabase = (): void => pgCtl(dataDir, ['-m', 'fast', 'stop']);

/** The `app_ready` gauge, as a Prometheus scrape would read it now. */
async function appReady(t: TestApp): Promise<number | undefined> {
  const text = await t.app.get(MetricsService).render();
  const line = text.split('\n').find((l) => l.startsWith('app_ready '));
  return line === undefined ? undefined : Number(line.slice('app_ready '.length));
}

describe('readiness and a PostgreSQL outage', () => {
  let t: TestApp;
  let client: ReturnType<typeof api>;
  let auth: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp({ databaseUrl, env: { DATABASE_CONNECT_TIMEOUT_MS: '1000' } });
    client = api(t);
    auth = await bearerFor(databaseUrl);
  });
  afterAll(async () => {
    try {
      startDatabase();
    } catch {
      // Already running.
    }
    await t.close();
  });

  it('is ready while the database answers', async () => {
    const res = await client.get('/health/ready').expect(200);
    expect(res.body).toMatchObject({ status: 'ok', details: { database: { status: 'up' } } });
    expect(res.body.details.redis).toBeUndefined();
    expect(await appReady(t)).toBe(1);
  });

  it('turns not ready (503 SERVICE_UNAVAILABLE) when PostgreSQL stops; liveness stays 200', async () => {
    stopDatabase();
    // The outcome of the check before the stop answers for one interval at most: the next
    // probe checks again.
    await sleep(READINESS_INTERVAL_MS);
    const res = await client.get('/health/ready');
    expectErrorBody(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.body.message).toMatch(/database/);
    expect(res.headers['retry-after']).toBe('5');
    await client.get('/health/live').expect(200);
    const orders = await client.get('/v1/store/orders').set(auth);
    expectErrorBody(orders, 503, 'SERVICE_UNAVAILABLE');
    // What the InstanceNotReady alert watches.
    expect(await appReady(t)).toBe(0);
  });

  it('turns ready again when PostgreSQL is back, and serves orders without a restart', async () => {
    startDatabase();
    await eventually(
      () => client.get('/health/ready'),
      (r) => r.status === 200,
    );
    await client.get('/v1/store/orders').set(auth).expect(200);
  });
});

describe('readiness under a flood of probes', () => {
  let t: TestApp;
  let database: PostgresStatementCounter;
  let url: string;
  const agent = new Agent({ keepAlive: true, maxSockets: 50 });

  beforeAll(async () => {
    database = await PostgresStatementCounter.start(await createTestDatabase());
    t = await createTestApp({ databaseUrl: database.url });
    url = await listen(t);
  });
  afterAll(async () => {
    agent.destroy();
    await t.close();
    await database.close();
  });

  it('costs the database at most one query per interval, however many probes ask at once', async () => {
    // What terminus' database check sends, counted where PostgreSQL receives it.
    const CHECK = 'SELECT 1';
    expect((await httpRequest(`${url}/health/ready`, { agent })).status).toBe(200);
    const before = database.count(CHECK);
    expect(before).toBeGreaterThanOrEqual(1);

    const started = performance.now();
    let probes = 0;
    while (performance.now() - started < 3 * READINESS_INTERVAL_MS) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => httpRequest(`${url}/health/ready`, { agent })),
      );
      for (const answer of answers) expect(answer.status).toBe(200);
      probes += answers.length;
    }
    const elapsed = performance.now() - started;

    const queries = database.count(CHECK) - before;
    expect(probes).toBeGreaterThan(100);
    // Checked again as time passes, never once per probe.
    expect(queries).toBeGreaterThanOrEqual(1);
    expect(queries).toBeLessThanOrEqual(Math.ceil(elapsed / READINESS_INTERVAL_MS) + 1);
  });
});

describeWithBinary('redis-server', 'redis-server')('readiness and a Redis outage', () => {
  let t: TestApp;
  let client: ReturnType<typeof api>;
  let redis: RedisServer;

  beforeAll(async () => {
    redis = await RedisServer.start();
    t = await createTestApp({ env: { REDIS_URL: redis.url } });
    client = api(t);
  });
  afterAll(async () => {
    await t.close();
    await redis.stop();
  });

  it('is ready with Redis up when REDIS_URL is configured', async () => {
    const res = await client.get('/health/ready').expect(200);
    expect(res.body.details).toMatchObject({
      database: { status: 'up' },
      redis: { status: 'up' },
    });
  });

  it('turns not ready while Redis is down, and ready again when it is back', async () => {
    await redis.stop();
    const down = await eventually(
      () => client.get('/health/ready'),
      (r) => r.status !== 200,
    );
    expectErrorBody(down, 503, 'SERVICE_UNAVAILABLE');
    expect(down.body.message).toMatch(/redis/);
    expect(down.body.message).not.toMatch(/database/);

    await redis.restart();
    await eventually(
      () => client.get('/health/ready'),
      (r) => r.status === 200,
    );
  });
});
