/**
 * Webhooks across a PostgreSQL outage: events committed before the database goes away for 30 s
 * all reach the receiver once it is back. On a cluster of this file's own (started by the global
 * setup), so that no other suite sees it stop.
 */
import { PinoLogger } from 'nestjs-pino';
import request from 'supertest';
import { createAdminApp } from '../src/admin/admin-app';
import { ENV, pgCtl } from './setup/clusters';
import { eventually } from './support/eventually';
import { said } from './support/said';
import { insertOrders } from './support/orders';
import { createTestApp } from './support/test-app';
import { WebhookReceiver } from './support/webhook-receiver';

describe('webhooks and a PostgreSQL outage', () => {
  it('loses nothing when the database is down for 30 s, and says so once at warn', async () => {
    const warned = jest.spyOn(PinoLogger.prototype, 'warn');
    const errored = jest.spyOn(PinoLogger.prototype, 'error');
    const informed = jest.spyOn(PinoLogger.prototype, 'info');
    const databaseUrl = process.env[ENV.webhooksOutageUrl] ?? '';
    const dataDir = process.env[ENV.webhooksOutageDataDir] ?? '';
    const port = new URL(databaseUrl).port;
    let running = true;
    const receiver = await new WebhookReceiver().start();
    try {
      const t = await createTestApp({
        databaseUrl,
        env: {
          WEBHOOK_ALLOW_HTTP: 'true',
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
          WEBHOOK_RETRY_SECONDS: '1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1',
          WEBHOOK_TIMEOUT_MS: '1500',
          DATABASE_CONNECT_TIMEOUT_MS: '1000',
        },
      });
      // The test's own idle connections are cut by the outage too.
      t.db.on('error', () => undefined);
      const admin = await createAdminApp(t.app, { logger: false });
      try {
        const { key } = await t.keys.issue({
          plan: 'enterprise',
          name: 'hooks',
          limits: { perMinute: 100000, perDay: 1000000 },
          scopes: ['webhooks:admin'],
        });
        const endpoint = await request(admin.getHttpServer())
          .post('/admin/v1/webhooks')
          .set('Authorization', `Bearer ${key}`)
          .send({ url: receiver.url, events: ['order.cancelled'] })
          .expect(201);
        // Failing until the outage is over: every delivery is pending when the database goes.
        let healthy = false;
        receiver.answer = () => (healthy ? { status: 200 } : { status: 503 });
        const ids = await insertOrders(
          t.db,
          Array.from({ length: 20 }, () => ({ petId: '3' })),
        );
        for (const id of ids) {
          await request(t.http)
            .delete(`/v1/store/orders/${id}`)
            .set('Authorization', `Bearer ${t.key}`)
            .expect(204);
        }
        await eventually(
          () =>
            Promise.resolve(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size),
          (n) => n === 20,
          20_000,
        );
        pgCtl(dataDir, ['-m', 'fast', 'stop']);
        running = false;
        await new Promise((r) => setTimeout(r, 30_000));
        pgCtl(dataDir, ['-o', `-p ${port}`, 'start']);
        running = true;
        healthy = true;
        const statuses = await eventually(
          async () =>
            (
              await t.db.query<{ status: string; n: number }>(
                `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY status`,
                [endpoint.body.id],
              )
            ).rows,
          (rows) => rows.length === 1 && rows[0].status === 'delivered',
          90_000,
        );
        expect(statuses).toEqual([{ status: 'delivered', n: 20 }]);
        // pg-boss failed every poll for 30 s: the log says it once, at warn, not at error.
        expect(said(warned, /^webhook queue cannot reach the database/)).toHaveLength(1);
        expect(said(errored, /webhook queue/)).toHaveLength(0);
        // And once that it is back, when the attempts' own queries are answered again.
        expect(said(informed, /^webhook queue reaches the database again/)).toHaveLength(1);
      } finally {
        await admin.close();
        await t.close();
      }
    } finally {
      await receiver.stop();
      if (!running) pgCtl(dataDir, ['-o', `-p ${port}`, 'start']);
    }
  }, 240_000);
});
