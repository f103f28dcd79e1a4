import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { MetricsService } from '../src/metrics/metrics.service';
import { REDIS_COMMAND_TIMEOUT_MS } from '../src/redis/redis-reply';
import { REDIS } from '../src/redis/redis.module';
import request from 'supertest';
import { api, expectErrorBody } from './support/client';
import { eventually } from './support/eventually';
import { describeWithBinary } from './support/system-binary';
import { twoInstancesPerSuite } from './support/suite-app';
import { createTestApp, TestApp } from './support/test-app';

const exec = promisify(execFile);
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

async function enterpriseKey(
  t: TestApp,
  perMinute: number,
  perDay: number,
): Promise<{ id: string; key: string }> {
  return t.keys.issue({ plan: 'enterprise', limits: { perMinute, perDay } });
}

/** Sends `n` requests at once and counts the answers by status. */
async function burst(
  send: () => PromiseLike<{ status: number }>,
  n: number,
): Promise<Record<number, number>> {
  const statuses = await Promise.all(Array.from({ length: n }, async () => (await send()).status));
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

/** Decisions the instance made without Redis, from its metrics. */
async function redisFallbacks(t: TestApp): Promise<number> {
  const metrics = await t.app.get(MetricsService).render();
  return Number(/^rate_limit_redis_fallbacks_total (\d+)$/m.exec(metrics)?.[1]);
}

/** Keeps this process's event loop busy for `ms`, as a long garbage collection would. */
function stallEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

const admittedIn = (counts: Record<number, number>): number =>
  Object.hasOwn(counts, 200) ? counts[200] : 0;

describe('rate limits (in-process counters)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_BAN_AFTER: '3', RATE_LIMIT_BAN_SECONDS: '120' } });
  });
  afterAll(() => t.close());

  it('admits 60 requests of a free key, counting down, then answers 429 with Retry-After', async () => {
    const { key } = await t.keys.issue({ plan: 'free' });
    const start = nowSeconds();
    for (let i = 1; i <= 60; i++) {
      const res = await api(t, key).get('/v1/store/orders').expect(200);
      expect(res.headers['x-ratelimit-limit']).toBe('60');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(60 - i));
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThanOrEqual(start);
      expect(reset).toBeLessThanOrEqual(nowSeconds() + 61);
    }
    const res = await api(t, key).get('/v1/store/orders').expect(429);
    expectErrorBody(res, 429, 'RATE_LIMIT_EXCEEDED');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    const retryAfter = Number(res.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  it('reports the day window when it binds, and refuses past it with a Retry-After of hours', async () => {
    const { key } = await enterpriseKey(t, 100, 3);
    for (let i = 1; i <= 3; i++) {
      const res = await api(t, key).get('/v1/store/orders').expect(200);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(3 - i));
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(nowSeconds() + 86_000);
    }
    const res = await api(t, key).get('/v1/store/orders').expect(429);
    expectErrorBody(res, 429, 'RATE_LIMIT_EXCEEDED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(86_000);
  });

  it('admits exactly the limit of 100 concurrent requests', async () => {
    const { key } = await enterpriseKey(t, 20, 1000);
    const counts = await burst(() => api(t, key).get('/v1/store/orders'), 100);
    expect(counts).toEqual({ 200: 20, 429: 80 });
  });

  it('counts every operation of a key against one limit, whatever the route', async () => {
    const { key } = await enterpriseKey(t, 4, 1000);
    await api(t, key).get('/v1/store/orders').expect(200);
    await api(t, key).delete('/v1/store/orders/777').expect(404);
    await api(t, key).delete('/v1/store/orders/abc').expect(400);
    await api(t, key).get('/v1/store/nothing').expect(404);
    await api(t, key).get('/v1/store/orders').expect(429);
  });

  it('bans a key that keeps sending after its 429s, until an operator unbans it', async () => {
    const { id, key } = await enterpriseKey(t, 2, 1000);
    await api(t, key).get('/v1/store/orders').expect(200);
    await api(t, key).get('/v1/store/orders').expect(200);
    for (let i = 0; i < 3; i++) {
      expectErrorBody(
        await api(t, key).get('/v1/store/orders').expect(429),
        429,
        'RATE_LIMIT_EXCEEDED',
      );
    }
    const banned = await api(t, key).get('/v1/store/orders').expect(429);
    expectErrorBody(banned, 429, 'API_KEY_BANNED');
    const retryAfter = Number(banned.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(100);
    expect(retryAfter).toBeLessThanOrEqual(120);
    expectErrorBody(
      await api(t, key).delete('/v1/store/orders/1').expect(429),
      429,
      'API_KEY_BANNED',
    );

    const list = async (): Promise<{ id: string; bannedUntil: string | null }[]> =>
      JSON.parse(
        (
          await exec('npm', ['run', '-s', 'keys', '--', 'list', '--json'], {
            env: { ...process.env, DATABASE_URL: t.databaseUrl },
          })
        ).stdout,
      ) as { id: string; bannedUntil: string | null }[];
    expect((await list()).find((k) => k.id === id)?.bannedUntil).toEqual(expect.any(String));

    await exec('npm', ['run', '-s', 'keys', '--', 'unban', id], {
      env: { ...process.env, DATABASE_URL: t.databaseUrl },
    });
    expect((await list()).find((k) => k.id === id)?.bannedUntil).toBeNull();
    // Within the key cache's lifetime the ban is gone; the minute window is still full.
    let code = 'API_KEY_BANNED';
    const unbannedAt = Date.now();
    while (code === 'API_KEY_BANNED' && Date.now() - unbannedAt < 10_000) {
      code = (await api(t, key).get('/v1/store/orders')).body.code;
      if (code === 'API_KEY_BANNED') await new Promise((r) => setTimeout(r, 250));
    }
    expect(code).toBe('RATE_LIMIT_EXCEEDED');
  }, 60_000);
});

describe('rate limits without a key (per client IP, free plan numbers)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_BAN_AFTER: '2', RATE_LIMIT_BAN_SECONDS: '60' } });
  });
  afterAll(() => t.close());

  it('counts 401s against the IP, then answers 429, then bans the IP', async () => {
    for (let i = 1; i <= 60; i++) {
      const res = await api(t, null).get('/v1/store/orders').expect(401);
      expect(res.headers['x-ratelimit-limit']).toBe('60');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(60 - i));
    }
    expectErrorBody(
      await api(t, 'sk_bad').get('/v1/store/orders').expect(429),
      429,
      'RATE_LIMIT_EXCEEDED',
    );
    expectErrorBody(
      await api(t, null).delete('/v1/store/orders/1').expect(429),
      429,
      'RATE_LIMIT_EXCEEDED',
    );
    const banned = await api(t, null).get('/v1/store/orders').expect(429);
    expectErrorBody(banned, 429, 'API_KEY_BANNED');
    expect(Number(banned.headers['retry-after'])).toBeGreaterThan(50);
    // A valid key is its own tracker: the IP's ban does not touch it.
    await api(t).get('/v1/store/orders').expect(200);
  });
});

describeWithBinary('redis-server', 'redis-server')('rate limits shared through Redis', () => {
  const two = twoInstancesPerSuite({ redis: true });

  it('admits exactly the limit of 100 concurrent requests', async () => {
    const { key } = await enterpriseKey(two.a, 20, 1000);
    const counts = await burst(() => api(two.a, key).get('/v1/store/orders'), 100);
    expect(counts).toEqual({ 200: 20, 429: 80 });
  });

  it('enforces one limit across two instances, requests alternating', async () => {
    const { key } = await enterpriseKey(two.a, 30, 1000);
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await api(i % 2 === 0 ? two.a : two.b, key).get('/v1/store/orders');
      statuses.push(res.status);
      if (res.status === 200) expect(res.headers['x-ratelimit-remaining']).toBe(String(29 - i));
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.slice(30).every((s) => s === 429)).toBe(true);
  });

  it('keeps answering, promptly and still limited per instance, while Redis is down; shares again when it is back', async () => {
    const { key } = await enterpriseKey(two.a, 5, 1000);
    await api(two.a, key).get('/v1/store/orders').expect(200);
    await two.redis.stop();
    try {
      const started = Date.now();
      const down = await burst(() => api(two.a, key).get('/v1/store/orders').timeout(5_000), 10);
      // Fail open to per-instance counters: no hung request, no error, the limit still holds here.
      expect(down).toEqual({ 200: 5, 429: 5 });
      expect(Date.now() - started).toBeLessThan(5_000);
      // ... and says so in its metrics, once per decision made without Redis.
      expect(await redisFallbacks(two.a)).toBeGreaterThanOrEqual(10);
    } finally {
      await two.redis.restart();
    }
    // Redis is back, empty (this one keeps nothing on disk). Until an instance's client has
    // reconnected, it still decides alone: wait until both answer ready (readiness pings Redis),
    // rather than reading a remaining count that may come from an instance's own fallback.
    for (const instance of [two.a, two.b]) {
      await eventually(
        async () => (await request(instance.http).get('/health/ready')).status,
        (status) => status === 200,
        15_000,
      );
    }
    // Then they share one budget again: a new key's 5 requests are spent across both instances.
    const { key: fresh } = await enterpriseKey(two.a, 5, 1000);
    for (let i = 0; i < 3; i++) await api(two.b, fresh).get('/v1/store/orders').expect(200);
    const afterBack = await burst(() => api(two.a, fresh).get('/v1/store/orders'), 10);
    expect(afterBack).toEqual({ 200: 2, 429: 8 });
  });

  it('decides by the answer Redis gave in time, though the event loop then stalled past the timeout', async () => {
    const { key } = await enterpriseKey(two.a, 1, 1000);
    await api(two.a, key).get('/v1/store/orders').expect(200);
    // The next request's script goes out; Redis answers at once, while this process is stalled
    // for longer than the command timeout (a long garbage collection, a throttled CPU).
    const redis = two.a.app.get<Redis>(REDIS);
    const send = redis.sendCommand.bind(redis);
    let stalled = false;
    const sent = jest.spyOn(redis, 'sendCommand').mockImplementation((...args) => {
      const reply = send(...args);
      if (!stalled && args[0].name === 'evalsha') {
        stalled = true;
        stallEventLoop(REDIS_COMMAND_TIMEOUT_MS + 300);
      }
      return reply;
    });
    const fallbacksBefore = await redisFallbacks(two.a);
    try {
      // Redis counted the key's one request: 429, not a request admitted by local counters.
      await api(two.a, key).get('/v1/store/orders').expect(429);
    } finally {
      sent.mockRestore();
    }
    expect(stalled).toBe(true);
    expect(await redisFallbacks(two.a)).toBe(fallbacksBefore);
  });

  it("leases a busy key's budget: few round trips, exact headers, never past the limit across instances, nothing lost", async () => {
    // 1,500 a minute: leases of up to 1% of what remains, down to 1,000 remaining.
    const { key } = await enterpriseKey(two.a, 1_500, 1_000_000);
    const redisClient = new Redis(two.redis.url);
    try {
      await redisClient.config('RESETSTAT');
      for (let i = 0; i < 100; i++) {
        const res = await api(two.a, key).get('/v1/store/orders').expect(200);
        // One instance's answers count down one by one, leased or not.
        expect(res.headers['x-ratelimit-remaining']).toBe(String(1_499 - i));
      }
      const stats = await redisClient.info('commandstats');
      const scripts = Number(/^cmdstat_evalsha:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
      // One script a request without leases; with them, one per lease (up to 14 requests here).
      expect(scripts).toBeGreaterThan(0);
      expect(scripts).toBeLessThan(30);
    } finally {
      redisClient.disconnect();
    }

    // Both instances at once, far past the limit: each may hold a lease, and neither admits a
    // request the counters in Redis have not already counted.
    let admitted = 100;
    for (let round = 0; round < 3; round++) {
      const [fromA, fromB] = await Promise.all([
        burst(() => api(two.a, key).get('/v1/store/orders'), 300),
        burst(() => api(two.b, key).get('/v1/store/orders'), 300),
      ]);
      admitted += admittedIn(fromA) + admittedIn(fromB);
    }
    expect(admitted).toBeLessThanOrEqual(1_500);

    // Leases lapse within a second and their unused requests go back: the key gets its whole
    // minute, no request more, no request less.
    await new Promise((r) => setTimeout(r, 2_500));
    for (let i = 0; admitted < 1_500 && i < 1_500; i++) {
      if ((await api(i % 2 === 0 ? two.a : two.b, key).get('/v1/store/orders')).status === 200)
        admitted++;
    }
    expect(admitted).toBe(1_500);
    await api(two.a, key).get('/v1/store/orders').expect(429);
    await api(two.b, key).get('/v1/store/orders').expect(429);
  });

  it("hands a lease's unused requests back when the instance stops", async () => {
    const c = await createTestApp({
      env: { REDIS_URL: two.redis.url },
      databaseUrl: two.databaseUrl,
    });
    const { id, key } = await enterpriseKey(c, 100_000, 1_000_000);
    // The second request within a second asks for a lease; the third is admitted from it.
    for (let i = 0; i < 3; i++) await api(c, key).get('/v1/store/orders').expect(200);
    await c.close();
    const redisClient = new Redis(two.redis.url);
    try {
      const counted = await redisClient.mget(`rl:{key:${id}}:minute`, `rl:{key:${id}}:day`);
      expect(counted).toEqual(['3', '3']);
    } finally {
      redisClient.disconnect();
    }
  });

  it('shares one budget between a key and its replacement (keys rotate) across instances', async () => {
    const old = await enterpriseKey(two.a, 6, 1000);
    for (let i = 0; i < 3; i++) await api(two.a, old.key).get('/v1/store/orders').expect(200);
    const { issued } = await two.a.keys.rotate(old.id, 60_000);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const [t, key] = i % 2 === 0 ? [two.b, issued.key] : [two.a, old.key];
      statuses.push((await api(t, key).get('/v1/store/orders')).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  });
});
