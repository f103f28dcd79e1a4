import request from 'supertest';
import { MetricsServer } from '../src/metrics/metrics.server';
import { MetricsService } from '../src/metrics/metrics.service';
import { bearerFor } from './support/auth';
import { api, expectErrorBody } from './support/client';
import { httpRequest } from './support/http';
import { createTestApp, TestApp } from './support/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('observability', () => {
  let t: TestApp;
  let client: ReturnType<typeof api>;
  let auth: Record<string, string>;
  let metricsUrl: string;

  const scrape = async (): Promise<string> => {
    const res = await httpRequest(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    return res.body;
  };
  const sample = (text: string, series: string): number | undefined => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { METRICS_PORT: '0' } });
    client = api(t);
    auth = await bearerFor(t.databaseUrl);
    metricsUrl = `http://127.0.0.1:${t.app.get(MetricsServer).port ?? '?'}/metrics`;
  });
  afterAll(() => t.close());

  describe('X-Request-Id', () => {
    it('echoes a sane request id the client sent', async () => {
      const res = await client
        .get('/health/live')
        .set('X-Request-Id', 'client-trace:42.a_b')
        .expect(200);
      expect(res.headers['x-request-id']).toBe('client-trace:42.a_b');
    });

    it('replaces an unsafe or oversized one with a new UUID, on errors too', async () => {
      for (const given of ['has spaces and "quotes"', 'x'.repeat(129), 'line\tbreak']) {
        const res = await client.get('/no/such/path').set('X-Request-Id', given);
        expectErrorBody(res, 404, 'NOT_FOUND');
        expect(res.headers['x-request-id']).toMatch(UUID);
      }
    });

    it('is on responses refused before any Nest middleware runs: a 413, an undecodable path', async () => {
      const tooLarge = await client
        .send('delete', '/v1/store/orders/1')
        .set('X-Request-Id', 'big-body-1')
        .send('x'.repeat(20 * 1024));
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.headers['x-request-id']).toBe('big-body-1');
      const undecodable = await client.delete('/v1/store/orders/%E0%A4%A');
      expect(undecodable.status).toBe(400);
      expect(undecodable.headers['x-request-id']).toMatch(UUID);
    });

    it('generates a different UUID for every request that sends none', async () => {
      const a = await client.get('/health/live');
      const b = await client.get('/health/live');
      expect(a.headers['x-request-id']).toMatch(UUID);
      expect(b.headers['x-request-id']).toMatch(UUID);
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    });
  });

  describe('Prometheus metrics on METRICS_PORT', () => {
    it('counts requests by method, route pattern and status, with a latency histogram', async () => {
      const series = 'http_requests_total{method="GET",route="/v1/store/orders",status="200"}';
      const before = sample(await scrape(), series) ?? 0;
      await client.get('/v1/store/orders').set(auth).expect(200);
      const text = await scrape();
      expect(sample(text, series)).toBe(before + 1);
      expect(
        sample(
          text,
          'http_request_duration_seconds_count{method="GET",route="/v1/store/orders",status="200"}',
        ),
      ).toBe(before + 1);
    });

    it('labels requests by route pattern, never by raw path', async () => {
      await client.delete('/v1/store/orders/424242').set(auth);
      await client.get('/no/such/path/987654');
      const text = await scrape();
      expect(text).toMatch(
        /http_requests_total\{method="DELETE",route="\/v1\/store\/orders\/:orderId",status="\d+"\} \d/,
      );
      expect(text).toMatch(/http_requests_total\{method="GET",route="unmatched",status="404"\} \d/);
      expect(text).not.toContain('424242');
      expect(text).not.toContain('987654');
    });

    it('counts rate-limit rejections and bans by plan', async () => {
      const metrics = t.app.get(MetricsService);
      metrics.rateLimitRejected('free');
      metrics.rateLimitRejected('free');
      metrics.keyBanned('pro');
      const text = await scrape();
      expect(sample(text, 'rate_limit_rejections_total{plan="free"}')).toBe(2);
      expect(sample(text, 'api_key_bans_total{plan="pro"}')).toBe(1);
    });

    it('reports the database pool', async () => {
      const text = await scrape();
      expect(sample(text, 'db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'db_pool_connections{state="idle"}')).toEqual(expect.any(Number));
      expect(sample(text, 'db_pool_waiting_requests')).toBe(0);
    });

    it('is not served on the API port', async () => {
      expectErrorBody(await client.get('/metrics'), 404, 'NOT_FOUND');
    });
  });

  it('sends security headers for a JSON API on every response, and no X-Powered-By', async () => {
    for (const res of [await client.get('/health/live'), await client.get('/no/such/path')]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBe(
        "default-src 'none';frame-ancestors 'none'",
      );
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      expect(res.headers['x-powered-by']).toBeUndefined();
      // Headers for HTML pages only: not on JSON.
      expect(res.headers['cross-origin-opener-policy']).toBeUndefined();
      expect(res.headers['x-xss-protection']).toBeUndefined();
    }
  });

  it("sends helmet's page headers on Swagger UI, with a policy that lets it run", async () => {
    // Not an API operation, so not through the contract-checking client.
    const res = await request(t.http).get('/docs/');
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
  });

  it('serves liveness and readiness outside /v1 and without a key', async () => {
    await client.get('/health/live').expect(200);
    await client.get('/health/ready').expect(200);
    expectErrorBody(await client.get('/v1/health/live'), 404, 'NOT_FOUND');
  });
});

describe('without METRICS_PORT', () => {
  it('serves no metrics at all', async () => {
    const t = await createTestApp();
    try {
      expect(t.app.get(MetricsServer).port).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
