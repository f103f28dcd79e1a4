import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createAdminApp } from '../../src/admin/admin-app';
import { eventually } from './eventually';
import { insertOrders } from './orders';
import { createTestApp, type TestApp } from './test-app';
import type { Received, WebhookReceiver } from './webhook-receiver';

/** Settings for receivers on loopback, with retries and timeouts a test can wait for. */
export const LOOPBACK_ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_SECONDS: '1,1,1',
  WEBHOOK_TIMEOUT_MS: '1500',
};

/** An app, its admin listener and a key of each admin scope. */
export interface WebhookSuite {
  t: TestApp;
  admin: NestExpressApplication;
  adminKey: string;
  keysAdminKey: string;
  close(): Promise<void>;
}

export async function startWebhookSuite(
  env: Record<string, string> = {},
  databaseUrl?: string,
): Promise<WebhookSuite> {
  const t = await createTestApp({ env: { ...LOOPBACK_ENV, ...env }, databaseUrl });
  const admin = await createAdminApp(t.app, { logger: false });
  const issue = (name: string, scope: string) =>
    t.keys.issue({
      plan: 'enterprise',
      name,
      limits: { perMinute: 1_000_000, perDay: 1_000_000_000 },
      scopes: [scope],
    });
  const { key } = await issue('webhooks-admin', 'webhooks:admin');
  const keysAdmin = await issue('keys-admin', 'keys:admin');
  return {
    t,
    admin,
    adminKey: key,
    keysAdminKey: keysAdmin.key,
    close: async () => {
      await admin.close();
      await t.close();
    },
  };
}

type Method = 'get' | 'post' | 'patch' | 'delete';

/** A call to the admin API with the suite's `webhooks:admin` key. */
export function adminCall(
  s: WebhookSuite,
  method: Method,
  path: string,
  body?: object | string,
): request.Test {
  const req = request(s.admin.getHttpServer())
    [method](path)
    .set('Authorization', `Bearer ${s.adminKey}`);
  return body === undefined ? req : req.send(body);
}

export async function addEndpoint(
  s: WebhookSuite,
  url: string,
  events: string[] = ['order.cancelled'],
): Promise<{ id: string; secret: string }> {
  const res = await adminCall(s, 'post', '/admin/v1/webhooks', { url, events }).expect(201);
  return res.body as { id: string; secret: string };
}

/** Cancels the order `id` over HTTP, with a request id of its own. */
export async function cancel(s: WebhookSuite, id: string): Promise<void> {
  await request(s.t.http)
    .delete(`/v1/store/orders/${id}`)
    .set('Authorization', `Bearer ${s.t.key}`)
    .set('X-Request-Id', `req-cancel-${id}`)
    .expect(204);
}

/** The id of the audit event that a change of `target` wrote last, as the message's webhook-id. */
export async function webhookIdOf(s: WebhookSuite, target: string): Promise<string> {
  const { rows } = await s.t.db.query<{ id: string }>(
    'SELECT max(id) AS id FROM audit_events WHERE target = $1',
    [target],
  );
  return `evt_${rows[0].id}`;
}

/** Cancels a new order; answers the event's webhook-id. */
export async function cancelNew(s: WebhookSuite): Promise<string> {
  const [id] = await insertOrders(s.t.db, [{ petId: '1', quantity: 1 }]);
  await cancel(s, id);
  return await webhookIdOf(s, `order:${id}`);
}

export interface DeliveryJson {
  id: string;
  eventId: string;
  type: string;
  status: string;
  attempts: number;
  lastAttemptAt?: string;
  lastStatusCode?: number;
  lastError?: string;
  nextAttemptAt?: string;
  deliveredAt?: string;
}

/**
 * The delivery of an event to an endpoint, once there: an event fans out into its deliveries
 * after its change committed, within the time a delivery has to start.
 */
export async function deliveryOf(
  s: WebhookSuite,
  endpointId: string,
  eventId: string,
): Promise<DeliveryJson> {
  const page = await eventually(
    async () => {
      const res = await adminCall(
        s,
        'get',
        `/admin/v1/webhooks/${endpointId}/deliveries?limit=100`,
      );
      if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${res.text}`);
      return res.body as { data: DeliveryJson[] };
    },
    (body) => body.data.some((d) => d.eventId === eventId),
    5000,
  );
  return page.data.find((d) => d.eventId === eventId) as DeliveryJson;
}

/** The first `count` messages of an event the receiver got, waiting up to `timeoutMs`. */
export async function received(
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

/**
 * The delivery records of the messages `webhookIds` (none when it is empty): what a test shows of
 * a message that arrived twice, to tell a retried attempt (its last error) from one made twice.
 */
export async function deliveryRecordsOf(
  t: TestApp,
  webhookIds: readonly string[],
): Promise<object[]> {
  if (webhookIds.length === 0) return [];
  const { rows } = await t.db.query<object>(
    `SELECT webhook_id, endpoint_id, status, attempts, last_status_code, last_error
       FROM webhook_deliveries WHERE webhook_id = ANY ($1::text[]) ORDER BY webhook_id`,
    [webhookIds],
  );
  return rows;
}

/** The delivery of an event to an endpoint once it is no longer pending. */
export async function settled(
  s: WebhookSuite,
  endpointId: string,
  eventId: string,
  timeoutMs = 20_000,
): Promise<DeliveryJson> {
  return await eventually(
    () => deliveryOf(s, endpointId, eventId),
    (d) => d.status !== 'pending',
    timeoutMs,
  );
}
