import Redis from 'ioredis';
import { Agent } from 'node:http';
import type { PinoLogger } from 'nestjs-pino';
import { generateApiKey } from '../src/auth/api-key';
import { RedisRateLimitStorage } from '../src/rate-limit/redis-rate-limit.storage';
import { withClient } from './setup/clusters';
import { eventually } from './support/eventually';
import { HttpAnswer, httpRequest } from './support/http';
import { rawExchange } from './support/raw-http';
import { RedisServer } from './support/redis-server';
import { describeWithBinary } from './support/system-binary';
import { listeningAppPerSuite } from './support/suite-app';
import { createTestApp, listen, TestApp } from './support/test-app';

const send = (
  url: string,
  headers: Record<string, string | string[]> = {},
  agent?: Agent,
): Promise<HttpAnswer> => httpRequest(url, { headers, agent });

const errorCode = (answer: { body: string }): unknown =>
  (JSON.parse(answer.body) as { code?: unknown }).code;

describe('hardening: bodies, paths and headers', () => {
  const app = listeningAppPerSuite({ env: { TRUST_PROXY: 'true' } });

  describe('a body over 16 KiB', () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');

    it('declared by Content-Length: 413 at once, Connection: close, the rest never read', async () => {
      const answer = await rawExchange(
        app.url,
        `POST /v1/store/orders HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000000000\r\n\r\n`,
        { keepSending: chunk },
      );
      expect(answer.status).toBe(413);
      expect(errorCode(answer)).toBe('PAYLOAD_TOO_LARGE');
      expect(answer.headers.connection).toBe('close');
      expect(answer.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
      // Read to the end, it would take minutes (and 100 GB); refused, it is over at once.
      expect(answer.answeredAfterMs).toBeLessThan(1000);
      expect(answer.closedByServer).toBe(true);
      expect(answer.sentTotal).toBeLessThan(16 * 1024 * 1024);
    });

    it('sent chunked: 413 once past the limit, and the connection closed', async () => {
      const answer = await rawExchange(
        app.url,
        `DELETE /v1/store/orders/1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${app.t.key}\r\n` +
          `Transfer-Encoding: chunked\r\n\r\n`,
        { keepSending: Buffer.from(`10000\r\n${'y'.repeat(0x10000)}\r\n`) },
      );
      expect(answer.status).toBe(413);
      expect(errorCode(answer)).toBe('PAYLOAD_TOO_LARGE');
      expect(answer.headers.connection).toBe('close');
      expect(answer.answeredAfterMs).toBeLessThan(1000);
      expect(answer.closedByServer).toBe(true);
      expect(answer.sentTotal).toBeLessThan(16 * 1024 * 1024);
    });
  });

  describe('paths are case-sensitive', () => {
    it.each([
      ['GET', '/V1/store/orders'],
      ['GET', '/v1/Store/orders'],
      ['DELETE', '/V1/store/orders/1'],
      ['POST', '/V1/store/orders'],
    ])('%s %s is 404 NOT_FOUND, not an alias', async (method, path) => {
      const answer = await httpRequest(`${app.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${app.t.key}` },
      });
      expect(answer.status).toBe(404);
      expect(errorCode(answer)).toBe('NOT_FOUND');
    });
  });

  describe('more than one Authorization header', () => {
    it.each([
      ['the same valid key twice', (key: string) => [key, key]],
      ['a valid key, then another', (key: string) => [key, generateApiKey()]],
      ['another, then a valid key', (key: string) => [generateApiKey(), key]],
    ])('%s: 400 BAD_REQUEST with error="invalid_request"', async (_, keys) => {
      const answer = await send(`${app.url}/v1/store/orders`, {
        Authorization: keys(app.t.key).map((k) => `Bearer ${k}`),
        'X-Forwarded-For': '192.0.2.7',
      });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({
        code: 'BAD_REQUEST',
        message: expect.any(String),
        status: 400,
      });
      expect(answer.headers['www-authenticate']).toBe(
        'Bearer realm="store-orders", error="invalid_request"',
      );
      expect(answer.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    });

    it('one Authorization header still works', async () => {
      const answer = await send(`${app.url}/v1/store/orders`, {
        Authorization: `Bearer ${app.t.key}`,
      });
      expect(answer.status).toBe(200);
    });
  });

  describe('the OpenAPI document served from the request', () => {
    const serversOf = (answer: HttpAnswer): string[] =>
      (JSON.parse(answer.body) as { servers: { url: string }[] }).servers.map((s) => s.url);

    it('shows a well-formed Host, and says it varies by it', async () => {
      const answer = await send(`${app.url}/openapi.json`, { Host: 'api.example.com:8443' });
      expect(serversOf(answer)[0]).toBe('http://api.example.com:8443/v1');
      expect(answer.headers.vary).toMatch(/\bHost\b/i);
      expect(answer.headers.vary).toMatch(/\bX-Forwarded-Proto\b/i);
    });

    it.each([
      ['a Host with markup', { Host: 'x" onmouseover=y' }],
      ['a Host with a path', { Host: 'evil.example/phish?' }],
      ['a Host with a bad port', { Host: 'api.example.com:99999' }],
      ['a javascript: scheme from X-Forwarded-Proto', { 'X-Forwarded-Proto': 'javascript' }],
    ])('falls back to the relative /v1 for %s', async (_, headers) => {
      const answer = await send(`${app.url}/openapi.json`, headers);
      expect(answer.status).toBe(200);
      expect(serversOf(answer)[0]).toBe('/v1');
      expect(answer.body).not.toMatch(/onmouseover|javascript:|phish/);
    });
  });
});

describe('hardening: a flood of made-up keys', () => {
  it('costs at most the IP limit (60) in key lookups, and leaves the IP banned', async () => {
    const t = await createTestApp();
    // Past its budget of lookups, a made-up key is answered once the instance's set of key hashes
    // is confirmed current (the feed's heartbeat, every second): so the rest of the flood comes
    // over many connections at once, as a flood would, each batch answered at one heartbeat.
    const BATCH = 500;
    const agent = new Agent({ keepAlive: true, maxSockets: BATCH });
    try {
      const url = await listen(t);
      const madeUp = (): Promise<HttpAnswer> =>
        send(`${url}/v1/store/orders`, { Authorization: `Bearer ${generateApiKey()}` }, agent);
      for (let i = 0; i < 60; i++) expect((await madeUp()).status).toBe(401);
      for (let sent = 60; sent < 2000; sent += BATCH) {
        const answers = await Promise.all(Array.from({ length: BATCH }, madeUp));
        for (const answer of answers) expect(answer.status).toBe(429);
      }
      const last = await madeUp();
      expect(last.status).toBe(429);
      expect(errorCode(last)).toBe('API_KEY_BANNED');
    } finally {
      agent.destroy();
      // Closing the pool ends its backends, which flush their statistics.
      await t.close();
    }
    const scans = await withClient(t.databaseUrl, async (client) => {
      const { rows } = await client.query<{ idx_scan: string }>(
        `SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'UQ_api_keys_key_hash'`,
      );
      return Number(rows[0]?.idx_scan ?? -1);
    });
    expect(scans).toBeGreaterThan(0);
    expect(scans).toBeLessThanOrEqual(60);
  }, 120_000);
});

describe('hardening: a flood of anonymous addresses (in-process counters)', () => {
  // A small cache of anonymous trackers, so that a few hundred addresses overflow it as
  // 120,000 overflow the default one.
  const ANONYMOUS_TRACKERS = 100;
  let t: TestApp;
  let url: string;
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });

  beforeAll(async () => {
    t = await createTestApp({
      env: { TRUST_PROXY: 'true', RATE_LIMIT_ANONYMOUS_TRACKERS: String(ANONYMOUS_TRACKERS) },
    });
    url = await listen(t);
  });
  afterAll(async () => {
    agent.destroy();
    await t.close();
  });

  const flood = async (addresses: number): Promise<void> => {
    for (let i = 0; i < addresses; i += 4) {
      await Promise.all(
        [0, 1, 2, 3].map((j) =>
          send(
            `${url}/v1/store/orders`,
            { 'X-Forwarded-For': `10.9.${(i + j) >> 8}.${(i + j) & 255}` },
            agent,
          ),
        ),
      );
    }
  };

  it("keeps a key's windows while other clients' addresses overflow the anonymous trackers", async () => {
    const { key } = await t.keys.issue({ plan: 'free' });
    const asKey = { Authorization: `Bearer ${key}`, 'X-Forwarded-For': '192.0.2.50' };
    for (let i = 0; i < 60; i++)
      expect((await send(`${url}/v1/store/orders`, asKey, agent)).status).toBe(200);
    const refused = await send(`${url}/v1/store/orders`, asKey, agent);
    expect(refused.status).toBe(429);

    await flood(3 * ANONYMOUS_TRACKERS);

    // Still the same full minute window: not a fresh one with 59 left.
    const after = await send(`${url}/v1/store/orders`, asKey, agent);
    expect(after.status).toBe(429);
    expect(errorCode(after)).toBe('RATE_LIMIT_EXCEEDED');
    expect(after.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('still limits an anonymous address that keeps sending, however many others there are', async () => {
    const from = { 'X-Forwarded-For': '198.51.100.77' };
    let last: HttpAnswer | undefined;
    for (let i = 0; i < 61; i++) last = await send(`${url}/v1/store/orders`, from, agent);
    expect(last?.status).toBe(429);
    // Fewer addresses than the cache holds: the recently seen one is kept.
    await flood(ANONYMOUS_TRACKERS / 2);
    expect((await send(`${url}/v1/store/orders`, from, agent)).status).toBe(429);
  });
});

describe('hardening: unknown paths outside the API versions', () => {
  let t: TestApp;
  let url: string;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: 'true' } });
    url = await listen(t);
  });
  afterAll(async () => {
    agent.destroy();
    await t.close();
  });

  it('count against the anonymous limit, with its headers, then answer 429 RATE_LIMIT_EXCEEDED', async () => {
    const from = { 'X-Forwarded-For': '203.0.113.9' };
    const paths = [
      '/nope',
      '/',
      '/wp-login.php',
      '/docs/missing.js',
      '/health/nope',
      '/V1/store/orders',
    ];
    for (let i = 0; i < 60; i++) {
      const answer = await send(`${url}${paths[i % paths.length]}`, from, agent);
      expect(answer.status).toBe(404);
      expect(errorCode(answer)).toBe('NOT_FOUND');
      expect(answer.headers['x-ratelimit-limit']).toBe('60');
      expect(answer.headers['x-ratelimit-remaining']).toBe(String(59 - i));
    }
    const refused = await send(`${url}/nope`, from, agent);
    expect(refused.status).toBe(429);
    expect(errorCode(refused)).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // One limit per address: the API refuses it too.
    expect((await send(`${url}/v1/store/orders`, from, agent)).status).toBe(429);

    // Public routes stay unlimited (and carry no rate-limit headers).
    for (const path of [
      '/health/live',
      '/health/ready',
      '/openapi.json',
      '/openapi/v2.json',
      '/docs/',
    ]) {
      const answer = await send(`${url}${path}`, from, agent);
      expect({ path, status: answer.status }).toEqual({ path, status: 200 });
      expect(answer.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  it('count against the key when one is sent, like any other request', async () => {
    const { key } = await t.keys.issue({ plan: 'free' });
    const asKey = { Authorization: `Bearer ${key}`, 'X-Forwarded-For': '203.0.113.10' };
    expect(
      (await send(`${url}/v1/store/orders`, asKey, agent)).headers['x-ratelimit-remaining'],
    ).toBe('59');
    const unknown = await send(`${url}/nope`, asKey, agent);
    expect(unknown.status).toBe(404);
    expect(unknown.headers['x-ratelimit-remaining']).toBe('58');
  });
});

/** The anonymous tracker, whichever storage holds the counters. */
function anonymousTrackerSuite(storage: () => { env: Record<string, string>; redis?: Redis }) {
  let t: TestApp;
  let url: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { TRUST_PROXY: 'true', ...storage().env } });
    url = await listen(t);
  });
  afterAll(() => t.close());

  const remainingFor = async (forwardedFor: string): Promise<number> => {
    const answer = await send(`${url}/v1/store/orders`, { 'X-Forwarded-For': forwardedFor });
    expect(answer.status).toBe(401);
    return Number(answer.headers['x-ratelimit-remaining']);
  };

  it('counts an X-Forwarded-For that is no IP address against the socket address', async () => {
    const junk = ['not-an-ip', '999.1.1.1', 'x'.repeat(15_000), '10.0.0.1; DROP', ''];
    const remaining: number[] = [];
    for (const value of junk) remaining.push(await remainingFor(value || ' '));
    // One tracker (the socket's address), counting down; not a fresh one per made-up value.
    expect(remaining).toEqual(remaining.map((_, i) => remaining[0] - i));
    const redis = storage().redis;
    if (redis) {
      const keys = await redis.keys('rl:*');
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) expect(key.length).toBeLessThan(80);
      expect(keys.join(' ')).not.toMatch(/not-an-ip|999\.1|xxxx|DROP/);
    }
  });

  it('tracks an IPv6 client by its /64', async () => {
    const first = await remainingFor('2001:db8:1:2::1');
    expect(await remainingFor('2001:db8:1:2:ffff:ffff:ffff:9')).toBe(first - 1);
    expect(await remainingFor('2001:0db8:0001:0002:0000:0000:0000:0abc')).toBe(first - 2);
    // Another /64 is another subscriber.
    expect(await remainingFor('2001:db8:1:3::1')).toBe(59);
    // An IPv4 address in IPv6 form is that IPv4 client.
    const v4 = await remainingFor('198.51.100.4');
    expect(await remainingFor('::ffff:198.51.100.4')).toBe(v4 - 1);
  });
}

describe('hardening: the anonymous tracker (in-process counters)', () => {
  anonymousTrackerSuite(() => ({ env: {} }));
});

describeWithBinary('redis-server', 'redis-server')(
  'hardening: the anonymous tracker (counters in Redis)',
  () => {
    let server: RedisServer;
    let redis: Redis;
    beforeAll(async () => {
      server = await RedisServer.start();
      redis = new Redis(server.url);
    });
    afterAll(async () => {
      redis.disconnect();
      await server.stop();
    });
    anonymousTrackerSuite(() => ({ env: { REDIS_URL: server.url }, redis }));
  },
);

describeWithBinary('redis-server', 'redis-server')(
  "hardening: Redis's eviction policy and the keys' counters",
  () => {
    /** What the storage warns of once it is connected to a Redis run with `args`. */
    async function warningsWith(args: string[]): Promise<string[]> {
      const server = await RedisServer.start(args);
      const redis = new Redis(server.url, { maxRetriesPerRequest: 0 });
      const warnings: string[] = [];
      const logger = {
        warn: (_: unknown, msg: string) => warnings.push(msg),
        debug: () => undefined,
        info: () => undefined,
      } as unknown as PinoLogger;
      const storage = new RedisRateLimitStorage(redis, logger);
      try {
        // Connected, and the check (one CONFIG GET) answered: a PING after it comes back after it.
        await redis.ping();
        await redis.ping();
        return warnings;
      } finally {
        await storage.beforeApplicationShutdown();
        redis.disconnect();
        await server.stop();
      }
    }

    it('warns when Redis may evict counters under memory pressure', async () => {
      const warnings = await warningsWith(['--maxmemory-policy', 'allkeys-lru']);
      expect(warnings).toEqual([
        expect.stringMatching(/maxmemory-policy is allkeys-lru.*noeviction/),
      ]);
    });

    it('says nothing under noeviction', async () => {
      expect(await warningsWith(['--maxmemory-policy', 'noeviction'])).toEqual([]);
    });
  },
);

describeWithBinary('redis-server', 'redis-server')(
  'hardening: errors of public routes are never counted',
  () => {
    let server: RedisServer;
    let t: TestApp;
    let url: string;

    beforeAll(async () => {
      server = await RedisServer.start();
      t = await createTestApp({ env: { REDIS_URL: server.url } });
      url = await listen(t);
    });
    afterAll(async () => {
      await t.close();
      await server.stop();
    });

    it('answers a load balancer polling readiness 503 while Redis is down, never 429', async () => {
      await server.stop();
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        await eventually(
          () => send(`${url}/health/ready`, {}, agent),
          (answer) => answer.status === 503,
        );
        for (let i = 0; i < 70; i++) {
          const answer = await send(`${url}/health/ready`, {}, agent);
          expect(answer.status).toBe(503);
          expect(errorCode(answer)).toBe('SERVICE_UNAVAILABLE');
          expect(answer.headers['x-ratelimit-limit']).toBeUndefined();
        }
      } finally {
        agent.destroy();
        await server.restart();
      }
    });
  },
);
