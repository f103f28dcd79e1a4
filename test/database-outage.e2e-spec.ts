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

    await t.db.end();
    pgCtl(dataDir, ['-m', 'fast', 'stop']);

    for (const send of [
      () => api(t).get('/v1/store/orders'),
      () => api(t).delete('/v1/store/orders/1'),
    ]) {
      const started = Date.now();
      const res = await send().timeout(10_000);
      expect(res.status).toBe(503);
      expectErrorBody(res, 503, 'SERVICE_UNAVAILABLE');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // Answered within the connect timeout (1 s) plus slack, not hung.
      expect(Date.now() - started).toBeLessThan(8_000);
    }

    pgCtl(dataDir, ['-o', `-p ${port}`, 'start']);
    let status = 0;
    for (let attempt = 0; attempt < 40 && status !== 200; attempt++) {
      status = (await api(t).get('/v1/store/orders').timeout(10_000)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(200);
    await api(t).delete('/v1/store/orders/1').expect(204);
  });
});
