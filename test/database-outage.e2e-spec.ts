import { ENV, pgCtl } from './setup/clusters';
import { api, expectErrorBody } from './support/client';
import { insertOrders } from './support/orders';
import { createTestApp, TestApp } from './support/test-app';

/** Uses the run's second PostgreSQL cluster, which only this suite stops and starts. */
describe('database outage', () => {
  let t: TestApp;
  const dataDir = process.env[ENV.outageDataDir] ?? '';
  const url = process.env[ENV.outageUrl] ?? '';
  const port = new URL(url).port;

  beforeAll(async () => {
    t = await createTestApp({ databaseUrl: url, env: { DATABASE_CONNECT_TIMEOUT_MS: '1000' } });
    await insertOrders(t.db, [{ status: 'pending' }, { status: 'shipped' }]);
  });
  afterAll(async () => {
    try {
      pgCtl(dataDir, ['-o', `-p ${port}`, 'start']);
    } catch {
      // Already running.
    }
    await t.close();
  });

  it('answers 503 with Retry-After while PostgreSQL is down, and recovers without a restart', async () => {
    await api(t).get('/v1/store/orders').expect(200);
    // v2's pages have connections of their own: one is open (idle) when the database goes away.
    await api(t).get('/v2/store/orders').expect(200);

    const unseenKey = t.keys.issue({ plan: 'pro' }).then((issued) => issued.key);
    await unseenKey;
    await t.db.end();
    pgCtl(dataDir, ['-m', 'fast', 'stop']);

    for (const send of [
      () => api(t).get('/v1/store/orders'),
      () => api(t).delete('/v1/store/orders/1'),
      () => api(t).get('/v2/store/orders'),
    ]) {
      const started = Date.now();
      const res = await send().timeout(10_000);
      expect(res.status).toBe(503);
      expectErrorBody(res, 503, 'SERVICE_UNAVAILABLE');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // Answered within the connect timeout (1 s) plus slack, not hung.
      expect(Date.now() - started).toBeLessThan(8_000);
    }

    // A key this app has never resolved (so not cached) cannot be checked now. Its requests are
    // the outage's 503s, not requests of an anonymous IP: more than the free plan's 60 a minute
    // must not turn into 429s or an IP ban.
    const unseen = await unseenKey;
    const statuses: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => api(t, unseen).get('/v1/store/orders').timeout(10_000)),
      );
      statuses.push(...answers.map((res) => res.status));
    }
    expect(new Set(statuses)).toEqual(new Set([503]));

    pgCtl(dataDir, ['-o', `-p ${port}`, 'start']);
    let status = 0;
    for (let attempt = 0; attempt < 40 && status !== 200; attempt++) {
      status = (await api(t).get('/v1/store/orders').timeout(10_000)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(200);
    await api(t).delete('/v1/store/orders/1').expect(204);
    await api(t).get('/v2/store/orders').expect(200);
    // And the unseen key, checked at last, is served on its own plan.
    const served = await api(t, unseen).get('/v1/store/orders').expect(200);
    expect(served.headers['x-ratelimit-limit']).toBe('300');
  });
});
