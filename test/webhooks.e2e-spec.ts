/**
 * Events and webhooks, through HTTP with a real receiver on loopback: every message verified
 * with the `standardwebhooks` package, as a receiver would, never with the service's own code.
 */
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { createAdminApp } from '../src/admin/admin-app';
import { eventually } from './support/eventually';
import { insertOrders } from './support/orders';
import { createTestApp, type TestApp } from './support/test-app';
import { type Received, WebhookReceiver } from './support/webhook-receiver';

const LOOPBACK_ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_SECONDS: '1,1,1',
  WEBHOOK_TIMEOUT_MS: '1500',
};

interface Suite {
  t: TestApp;
  admin: NestExpressApplication;
  adminKey: string;
  close(): Promise<void>;
}

async function startSuite(env: Record<string, string> = {}): Promise<Suite> {
  const t = await createTestApp({ env: { ...LOOPBACK_ENV, ...env } });
  const admin = await createAdminApp(t.app, { logger: false });
  const { key } = await t.keys.issue({
    plan: 'enterprise',
    name: 'webhooks-admin',
    limits: { perMinute: 1_000_000, perDay: 1_000_000_000 },
    scopes: ['webhooks:admin'],
  });
  return {
    t,
    admin,
    adminKey: key,
    close: async () => {
      await admin.close();
      await t.close();
    },
  };
}

type Method = 'get' | 'post' | 'patch' | 'delete';

function adminCall(s: Suite, method: Method, path: string, body?: object): request.Test {
  const req = request(s.admin.getHttpServer())
    [method](path)
    .set('Authorization', `Bearer ${s.adminKey}`);
  return body === undefined ? req : req.send(body);
}

/** The message verified as a receiver does it: throws unless a signature matches `secret`. */
function verified(
  secret: string,
  r: Received,
): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  }) as { type: string; timestamp: string; data: Record<string, unknown> };
}

async function addEndpoint(
  s: Suite,
  url: string,
  events: string[] = ['order.cancelled'],
): Promise<{ id: string; secret: string }> {
  const res = await adminCall(s, 'post', '/admin/v1/webhooks', { url, events }).expect(201);
  return res.body as { id: string; secret: string };
}

/** The first `count` messages of an event the receiver got, waiting up to `timeoutMs`. */
async function received(
  receiver: WebhookReceiver,
  webhookId: string,
  count: number,
  timeoutMs: number,
): Promise<Received[]> {
  return await eventually(
    () => Promise.resolve(receiver.of(webhookId)),
    (r) => r.length >= count,
    timeoutMs,
  );
}

async function cancel(s: Suite, id: string): Promise<void> {
  await request(s.t.http)
    .delete(`/v1/store/orders/${id}`)
    .set('Authorization', `Bearer ${s.t.key}`)
    .set('X-Request-Id', `req-cancel-${id}`)
    .expect(204);
}

describe('webhooks', () => {
  let s: Suite;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    s = await startSuite();
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await s.close();
    await receiver.stop();
  });
  beforeEach(() => {
    receiver.answer = () => ({ status: 200 });
  });

  it('delivers a cancellation, signed, to a subscribed endpoint', async () => {
    const endpoint = await addEndpoint(s, receiver.url);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const [id] = await insertOrders(s.t.db, [{ petId: '7', quantity: 2 }]);
    await cancel(s, id);
    const { rows } = await s.t.db.query<{ id: string }>(
      `SELECT id FROM audit_events WHERE target = $1`,
      [`order:${id}`],
    );
    const webhookId = `evt_${rows[0].id}`;
    const [message] = await received(receiver, webhookId, 1, 5000);
    const payload = verified(endpoint.secret, message);
    expect(message.headers['content-type']).toBe('application/json');
    expect(message.headers['user-agent']).toMatch(/^store-orders-webhooks\/\d+\.\d+\.\d+$/);
    expect(payload).toEqual({
      type: 'order.cancelled',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: {
        object: { id: Number(id), petId: 7, quantity: 2, complete: false, status: 'cancelled' },
        actor: expect.stringMatching(/^key:/),
        requestId: `req-cancel-${id}`,
      },
    });
  });
});
