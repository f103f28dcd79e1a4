/**
 * Events and webhooks, through HTTP with a real receiver on loopback: every message verified
 * with the `standardwebhooks` package, as a receiver would, never with the service's own code.
 */
import request from 'supertest';
import { MetricsService } from '../src/metrics/metrics.service';
import { WebhookResolver } from '../src/webhooks/webhook-addresses';
import { eventually } from './support/eventually';
import { insertOrders } from './support/orders';
import { verified, WebhookReceiver } from './support/webhook-receiver';
import {
  addEndpoint,
  adminCall,
  cancel,
  cancelNew,
  type DeliveryJson,
  deliveryOf,
  received,
  settled,
  startWebhookSuite as startSuite,
  type WebhookSuite as Suite,
  webhookIdOf,
} from './support/webhook-suite';

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
    const webhookId = await webhookIdOf(s, `order:${id}`);
    const [message] = await received(receiver, webhookId, 1, 5000);
    const payload = verified(endpoint.secret, message);
    expect(message.headers['content-type']).toBe('application/json');
    expect(message.headers['user-agent']).toMatch(/^store-orders-webhooks\/\d+\.\d+\.\d+$/);
    expect(Math.abs(Number(message.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(
      10,
    );
    expect(payload).toEqual({
      type: 'order.cancelled',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        object: { id: Number(id), petId: 7, quantity: 2, complete: false, status: 'cancelled' },
        actor: expect.stringMatching(/^key:/),
        requestId: `req-cancel-${id}`,
      },
    });
    const delivery = await settled(s, endpoint.id, webhookId);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200 });
    // A cancellation of an already cancelled order writes no event, and so sends nothing more:
    // read once a later event has arrived.
    await request(s.t.http)
      .delete(`/v1/store/orders/${id}`)
      .set('Authorization', `Bearer ${s.t.key}`)
      .expect(204);
    expect(await webhookIdOf(s, `order:${id}`)).toBe(webhookId);
    await received(receiver, await cancelNew(s), 1, 5000);
    expect(receiver.of(webhookId)).toHaveLength(1);
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
  });

  it('sends nothing for a change that was rolled back', async () => {
    const endpoint = await addEndpoint(s, receiver.url, ['order.cancelled']);
    const client = await s.t.db.connect();
    let eventId: string;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO audit_events (actor, action, target) VALUES ('cli:test', 'order.cancelled', 'order:999999') RETURNING id`,
      );
      eventId = rows[0].id;
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    const committed = await cancelNew(s);
    await received(receiver, committed, 1, 5000);
    expect(receiver.of(`evt_${eventId}`)).toHaveLength(0);
    const { rows } = await s.t.db.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [
      eventId,
    ]);
    expect(rows).toHaveLength(0);
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
  });

  it('sends a key change with the Key, never its secret or hash', async () => {
    const endpoint = await addEndpoint(s, receiver.url, ['key.created', 'key.revoked']);
    const issued = await adminKeyTool(s);
    const webhookId = await webhookIdOf(s, `key:${issued.id}`);
    const [message] = await received(receiver, webhookId, 1, 5000);
    const payload = verified(endpoint.secret, message);
    expect(payload.type).toBe('key.created');
    expect(payload.data.object).toEqual(
      expect.objectContaining({ id: issued.id, plan: 'pro', scopes: ['orders:read'] }),
    );
    expect(message.body).not.toContain(issued.key);
    expect(Object.keys(payload.data.object as object)).not.toContain('hash');
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
  });

  it('retries a failed attempt on the schedule, with the same webhook-id, then delivers', async () => {
    const endpoint = await addEndpoint(s, receiver.url);
    receiver.answer = (r) =>
      receiver.of(String(r.headers['webhook-id'])).length < 3
        ? { status: 503, body: 'busy '.repeat(1000) }
        : { status: 204 };
    const webhookId = await cancelNew(s);
    const messages = await received(receiver, webhookId, 3, 20_000);
    for (const m of messages) verified(endpoint.secret, m);
    // The schedule here is 1 s each (±10 %), plus at most a poll of the queue.
    for (let i = 1; i < 3; i++) {
      const gap = messages[i].at - messages[i - 1].at;
      expect(gap).toBeGreaterThanOrEqual(850);
      expect(gap).toBeLessThan(4000);
    }
    const delivery = await settled(s, endpoint.id, webhookId);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 204 });
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
  });

  it('ends a delivery failed after the last retry, keeping at most 1 KiB of the answer', async () => {
    const endpoint = await addEndpoint(s, receiver.url);
    receiver.answer = () => ({ status: 500, body: 'e'.repeat(5000) });
    const webhookId = await cancelNew(s);
    const delivery = await settled(s, endpoint.id, webhookId, 25_000);
    // One attempt and the three retries of WEBHOOK_RETRY_SECONDS=1,1,1.
    expect(delivery).toMatchObject({ status: 'failed', attempts: 4, lastStatusCode: 500 });
    expect(Buffer.byteLength(delivery.lastError ?? '')).toBeLessThanOrEqual(1024);
    expect(delivery.lastError).toMatch(/^HTTP 500: e+$/);
    expect(delivery.nextAttemptAt).toBeUndefined();
    expect(receiver.of(webhookId)).toHaveLength(4);
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
  });

  it('disables an endpoint that answers 410 ("gone") and sends it nothing more', async () => {
    const endpoint = await addEndpoint(s, receiver.url);
    receiver.answer = () => ({ status: 410 });
    const first = await cancelNew(s);
    const delivery = await settled(s, endpoint.id, first);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 410 });
    const shown = await adminCall(s, 'get', `/admin/v1/webhooks/${endpoint.id}`).expect(200);
    expect(shown.body).toMatchObject({ disabled: true, disabledReason: 'gone' });
    receiver.answer = () => ({ status: 200 });
    // Sent nothing while disabled: read once the same event has reached another endpoint (on the
    // same receiver), which gets it alone.
    const witness = await addEndpoint(s, receiver.url);
    const second = await cancelNew(s);
    await received(receiver, second, 1, 5000);
    expect(receiver.of(second)).toHaveLength(1);
    await adminCall(s, 'delete', `/admin/v1/webhooks/${witness.id}`).expect(204);
    // Re-enabled, it gets the events committed from then on.
    const enabled = await adminCall(s, 'patch', `/admin/v1/webhooks/${endpoint.id}`, {
      disabled: false,
    }).expect(200);
    expect(enabled.body).toMatchObject({ disabled: false });
    expect(enabled.body).not.toHaveProperty('disabledReason');
    const third = await cancelNew(s);
    await received(receiver, third, 1, 5000);
    expect(receiver.of(second)).toHaveLength(1);
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
  });

  it('never follows a redirect: it is a failed attempt', async () => {
    const endpoint = await addEndpoint(s, receiver.url);
    receiver.answer = (r) =>
      r.headers['webhook-id'] !== undefined &&
      receiver.of(String(r.headers['webhook-id'])).length === 1
        ? { status: 302, headers: { location: `${receiver.url}/elsewhere` } }
        : { status: 200 };
    const webhookId = await cancelNew(s);
    const messages = await received(receiver, webhookId, 2, 10_000);
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === webhookId)).toHaveLength(2);
    expect(messages.every((m) => m.headers['webhook-id'] === webhookId)).toBe(true);
    const delivery = await settled(s, endpoint.id, webhookId);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2 });
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
  });

  it('counts an answer later than WEBHOOK_TIMEOUT_MS as a failed attempt', async () => {
    const endpoint = await addEndpoint(s, receiver.url);
    receiver.answer = (r) =>
      receiver.of(String(r.headers['webhook-id'])).length === 1 ? 'hang' : { status: 200 };
    const webhookId = await cancelNew(s);
    await received(receiver, webhookId, 1, 5000);
    const pending = await eventually(
      () => deliveryOf(s, endpoint.id, webhookId),
      (d) => d.lastError !== undefined,
      10_000,
    );
    expect(pending).toMatchObject({ status: 'pending', attempts: 1 });
    expect(pending.lastError).toMatch(/no answer within 1500 ms/);
    expect(pending.nextAttemptAt).toBeDefined();
    const delivery = await settled(s, endpoint.id, webhookId);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2 });
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
  });

  it('signs with both secrets during a rotation grace, then with the new one alone', async () => {
    const endpoint = await addEndpoint(s, receiver.url);
    const rotated = await adminCall(s, 'post', `/admin/v1/webhooks/${endpoint.id}/rotate-secret`, {
      graceSeconds: 3600,
    }).expect(201);
    const { secret } = rotated.body as { secret: string };
    expect(secret).not.toBe(endpoint.secret);
    expect(rotated.body).toHaveProperty('secretRotatedAt');
    const webhookId = await cancelNew(s);
    const [message] = await received(receiver, webhookId, 1, 5000);
    expect(String(message.headers['webhook-signature']).split(' ')).toHaveLength(2);
    verified(secret, message);
    verified(endpoint.secret, message);
    await adminCall(s, 'post', `/admin/v1/webhooks/${endpoint.id}/rotate-secret`, {
      graceSeconds: 0,
    }).expect(201);
    const shown = await adminCall(s, 'get', `/admin/v1/webhooks/${endpoint.id}`).expect(200);
    expect(shown.body).not.toHaveProperty('secret');
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
  });

  it('pages deliveries newest first, filters them by status, and sends one again', async () => {
    const endpoint = await addEndpoint(s, receiver.url);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await cancelNew(s));
    for (const id of ids) await settled(s, endpoint.id, id);
    const first = await adminCall(
      s,
      'get',
      `/admin/v1/webhooks/${endpoint.id}/deliveries?limit=2`,
    ).expect(200);
    expect(first.body.hasMore).toBe(true);
    const seen: string[] = (first.body.data as DeliveryJson[]).map((d) => d.eventId);
    let cursor = first.body.nextCursor as string | undefined;
    while (cursor !== undefined) {
      const page = await adminCall(
        s,
        'get',
        `/admin/v1/webhooks/${endpoint.id}/deliveries?limit=2&cursor=${cursor}`,
      ).expect(200);
      seen.push(...(page.body.data as DeliveryJson[]).map((d) => d.eventId));
      cursor = page.body.nextCursor as string | undefined;
      expect(page.body.hasMore).toBe(cursor !== undefined);
    }
    expect(seen).toEqual([...ids].reverse());
    const delivered = await adminCall(
      s,
      'get',
      `/admin/v1/webhooks/${endpoint.id}/deliveries?status=delivered`,
    ).expect(200);
    expect(delivered.body.data).toHaveLength(5);
    const failed = await adminCall(
      s,
      'get',
      `/admin/v1/webhooks/${endpoint.id}/deliveries?status=failed`,
    ).expect(200);
    expect(failed.body).toEqual({ data: [], hasMore: false });
    for (const query of ['status=done', 'limit=0', 'limit=x', 'cursor=nope', 'other=1']) {
      const bad = await adminCall(
        s,
        'get',
        `/admin/v1/webhooks/${endpoint.id}/deliveries?${query}`,
      );
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('INVALID_QUERY');
    }

    // Sent again: a new attempt now, though it was delivered.
    const target = (first.body.data as DeliveryJson[])[0];
    const again = await adminCall(
      s,
      'post',
      `/admin/v1/webhooks/${endpoint.id}/deliveries/${target.id}/retry`,
    ).expect(202);
    expect(again.body).toMatchObject({ id: target.id, status: 'pending' });
    await received(receiver, target.eventId, 2, 5000);
    const redelivered = await settled(s, endpoint.id, target.eventId);
    expect(redelivered).toMatchObject({ status: 'delivered', attempts: 2 });
    const missing = await adminCall(
      s,
      'post',
      `/admin/v1/webhooks/${endpoint.id}/deliveries/00000000-0000-4000-8000-000000000000/retry`,
    ).expect(404);
    expect(missing.body.code).toBe('DELIVERY_NOT_FOUND');
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
  });

  it('pings an endpoint with a webhook.test message carrying the Endpoint', async () => {
    const endpoint = await addEndpoint(s, receiver.url, ['key.created']);
    const res = await adminCall(s, 'post', `/admin/v1/webhooks/${endpoint.id}/test`).expect(202);
    const delivery = res.body as DeliveryJson;
    expect(delivery).toMatchObject({ type: 'webhook.test', status: 'pending', attempts: 0 });
    const [message] = await received(receiver, delivery.eventId, 1, 5000);
    const payload = verified(endpoint.secret, message);
    expect(payload.type).toBe('webhook.test');
    expect(payload.data.object).toMatchObject({
      id: endpoint.id,
      url: receiver.url,
      disabled: false,
    });
    expect(JSON.stringify(payload)).not.toContain(endpoint.secret);
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
  });

  it('manages endpoints: list, show, change, remove (twice), 404 for unknown ids', async () => {
    const endpoint = await addEndpoint(s, receiver.url);
    const list = await adminCall(s, 'get', '/admin/v1/webhooks').expect(200);
    expect((list.body.data as { id: string }[]).map((e) => e.id)).toContain(endpoint.id);
    expect(JSON.stringify(list.body)).not.toContain('secret');
    const changed = await adminCall(s, 'patch', `/admin/v1/webhooks/${endpoint.id}`, {
      events: ['order.cancelled', 'key.revoked'],
      description: 'warehouse',
      disabled: true,
    }).expect(200);
    expect(changed.body).toMatchObject({
      events: ['order.cancelled', 'key.revoked'],
      description: 'warehouse',
      disabled: true,
      disabledReason: 'operator',
    });
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
    await adminCall(s, 'delete', `/admin/v1/webhooks/${endpoint.id}`).expect(204);
    for (const [method, path] of [
      ['get', `/admin/v1/webhooks/${endpoint.id}`],
      ['patch', `/admin/v1/webhooks/${endpoint.id}`],
      ['post', `/admin/v1/webhooks/${endpoint.id}/test`],
      ['get', '/admin/v1/webhooks/not-a-uuid/deliveries'],
      ['delete', '/admin/v1/webhooks/00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const res = await adminCall(s, method, path, method === 'patch' ? {} : undefined);
      expect([res.status, res.body.code]).toEqual([404, 'WEBHOOK_NOT_FOUND']);
    }
  });

  it('refuses bodies that are not valid, naming the field', async () => {
    const cases: [object | string, RegExp][] = [
      [{ events: ['order.cancelled'] }, /^url/],
      [{ url: receiver.url }, /^events/],
      [{ url: receiver.url, events: [] }, /^events/],
      [
        { url: receiver.url, events: ['order.shipped'] },
        /^events: unknown event type "order.shipped"/,
      ],
      [{ url: receiver.url, events: 'order.cancelled' }, /^events/],
      [{ url: receiver.url, events: ['order.cancelled'], extra: 1 }, /^extra/],
      [{ url: 'ftp://example.com/x', events: ['order.cancelled'] }, /^url/],
      [{ url: 'http://user:pw@127.0.0.1/x', events: ['order.cancelled'] }, /^url: must not carry/],
      [{ url: 'not a url', events: ['order.cancelled'] }, /^url/],
      [{ url: receiver.url, events: ['order.cancelled'], description: 'a\u0007b' }, /^description/],
      ['{"url":', /JSON/],
    ];
    for (const [body, message] of cases) {
      const req = adminCall(s, 'post', '/admin/v1/webhooks');
      const res = await (typeof body === 'string'
        ? req.set('Content-Type', 'application/json').send(body)
        : req.send(body));
      expect([res.status, res.body.code]).toEqual([400, 'INVALID_BODY']);
      expect(res.body.message).toMatch(message);
    }
  });

  it('needs webhooks:admin, which a key has only when granted by name', async () => {
    const every = await s.t.keys.issue({
      plan: 'enterprise',
      name: 'every',
      limits: { perMinute: 1000, perDay: 100000 },
    });
    const keysAdmin = await s.t.keys.issue({
      plan: 'enterprise',
      name: 'keys-admin',
      limits: { perMinute: 1000, perDay: 100000 },
      scopes: ['*', 'keys:admin'],
    });
    for (const key of [every.key, keysAdmin.key]) {
      const res = await request(s.admin.getHttpServer())
        .get('/admin/v1/webhooks')
        .set('Authorization', `Bearer ${key}`);
      expect([res.status, res.body.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
      expect(res.body.message).toMatch(/webhooks:admin/);
    }
    const document = await request(s.admin.getHttpServer()).get('/openapi/admin.json').expect(200);
    const op = document.body.paths['/admin/v1/webhooks'].post;
    expect(op['x-required-scopes']).toEqual(['webhooks:admin']);
  });

  it('reports attempts, their duration and the pending deliveries in /metrics', async () => {
    const metrics = await s.t.app.get(MetricsService).registry.metrics();
    expect(metrics).toMatch(/^webhook_deliveries_total\{result="delivered"\} [1-9]/m);
    expect(metrics).toMatch(/^webhook_deliveries_total\{result="retried"\} [1-9]/m);
    expect(metrics).toMatch(/^webhook_deliveries_total\{result="failed"\} [1-9]/m);
    expect(metrics).toMatch(/^webhook_delivery_duration_seconds_count [1-9]/m);
    expect(metrics).toMatch(/^webhook_pending_deliveries \d+/m);
    expect(metrics).toMatch(/^webhook_oldest_pending_delivery_age_seconds \d/m);
  });
});

/** Issues a key over the keys service as the keys tool does (an audited key.created). */
async function adminKeyTool(s: Suite): Promise<{ id: string; key: string }> {
  const res = await request(s.admin.getHttpServer())
    .post('/admin/v1/keys')
    .set('Authorization', `Bearer ${s.keysAdminKey}`)
    .send({ plan: 'pro', name: 'hooked', scopes: ['orders:read'] });
  expect([res.status, res.text]).toEqual([201, expect.stringContaining('"key"')]);
  return res.body as { id: string; key: string };
}

describe('webhooks: addresses (server-side request forgery)', () => {
  let s: Suite;
  let resolver: WebhookResolver;
  let answer: string[] = [];
  beforeAll(async () => {
    s = await startSuite({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', WEBHOOK_ALLOW_HTTP: 'false' });
    resolver = s.t.app.get(WebhookResolver);
    jest.spyOn(resolver, 'resolve').mockImplementation((host: string) => {
      if (host !== 'hooks.example.test') return Promise.reject(new Error(`${host}: unknown`));
      return Promise.resolve(
        answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
    });
  });
  afterAll(async () => {
    await s.close();
  });

  const refused = [
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.254',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '0.1.2.3',
    '240.0.0.1',
    '255.255.255.255',
    '224.0.0.1',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
  ];

  it.each(refused)('refuses an endpoint whose host resolves to %s', async (address) => {
    answer = ['93.184.216.34', address];
    const res = await adminCall(s, 'post', '/admin/v1/webhooks', {
      url: 'https://hooks.example.test/in',
      events: ['order.cancelled'],
    });
    expect([res.status, res.body.code]).toEqual([400, 'INVALID_BODY']);
    expect(res.body.message).toMatch(/^url: /);
  });

  it.each(refused)('refuses the literal address %s', async (address) => {
    const host = address.includes(':') ? `[${address}]` : address;
    const res = await adminCall(s, 'post', '/admin/v1/webhooks', {
      url: `https://${host}/in`,
      events: ['order.cancelled'],
    });
    expect([res.status, res.body.code]).toEqual([400, 'INVALID_BODY']);
    expect(res.body.message).toMatch(/^url: /);
  });

  it('refuses http:// unless allowed, and a change to a refused URL', async () => {
    answer = ['93.184.216.34'];
    const http = await adminCall(s, 'post', '/admin/v1/webhooks', {
      url: 'http://hooks.example.test/in',
      events: ['order.cancelled'],
    });
    expect([http.status, http.body.code]).toEqual([400, 'INVALID_BODY']);
    expect(http.body.message).toMatch(/^url: must be an https:\/\/ URL/);
    const ok = await adminCall(s, 'post', '/admin/v1/webhooks', {
      url: 'https://hooks.example.test/in',
      events: ['order.cancelled'],
    }).expect(201);
    const change = await adminCall(s, 'patch', `/admin/v1/webhooks/${ok.body.id}`, {
      url: 'https://[::ffff:7f00:1]/in',
    });
    expect([change.status, change.body.code]).toEqual([400, 'INVALID_BODY']);
    expect(change.body.message).toMatch(/^url: /);
  });

  it('checks the address again at every attempt: a name that now resolves to loopback is a failed attempt', async () => {
    answer = ['93.184.216.34'];
    const endpoint = await adminCall(s, 'post', '/admin/v1/webhooks', {
      url: 'https://hooks.example.test/in',
      events: ['order.cancelled'],
    }).expect(201);
    answer = ['127.0.0.1'];
    const webhookId = await cancelNew(s);
    const delivery = await eventually(
      () => deliveryOf(s, endpoint.body.id as string, webhookId),
      (d) => d.attempts > 0 && d.lastError !== undefined,
      10_000,
    );
    expect(delivery.lastError).toMatch(
      /^refused: hooks\.example\.test resolves to 127\.0\.0\.1 is not a public address/,
    );
    expect(delivery.lastStatusCode).toBeUndefined();
  });
});

describe('webhooks: the address connected to is the one resolved and checked', () => {
  let s: Suite;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    s = await startSuite();
    receiver = await new WebhookReceiver().start();
    jest
      .spyOn(s.t.app.get(WebhookResolver), 'resolve')
      .mockImplementation((host: string) =>
        host === 'receiver.example.test'
          ? Promise.resolve([{ address: '127.0.0.1', family: 4 }])
          : Promise.reject(new Error(`${host}: unknown`)),
      );
  });
  afterAll(async () => {
    await s.close();
    await receiver.stop();
  });

  it('connects to the address its resolver gave for the name', async () => {
    const port = new URL(receiver.url).port;
    const endpoint = await addEndpoint(s, `http://receiver.example.test:${port}/hook`);
    const webhookId = await cancelNew(s);
    const [message] = await received(receiver, webhookId, 1, 5000);
    expect(message.headers.host).toBe(`receiver.example.test:${port}`);
    verified(endpoint.secret, message);
  });
});

describe('webhooks: an endpoint failing for long', () => {
  it('is disabled ("failing") at a failure more than WEBHOOK_DISABLE_AFTER_HOURS after the first, its pending deliveries failed', async () => {
    // A retry far off: the first event's delivery stays pending, not attempted, meanwhile.
    const s = await startSuite({ WEBHOOK_RETRY_SECONDS: '600', WEBHOOK_DISABLE_AFTER_HOURS: '2' });
    const receiver = await new WebhookReceiver().start();
    try {
      receiver.answer = () => ({ status: 500 });
      const endpoint = await addEndpoint(s, receiver.url);
      const first = await cancelNew(s);
      const retried = await eventually(
        () => deliveryOf(s, endpoint.id, first),
        (d) => d.attempts === 1 && d.lastStatusCode === 500,
        10_000,
      );
      expect(retried).toMatchObject({ status: 'pending', nextAttemptAt: expect.any(String) });
      // A failure less than the setting ago disables nothing.
      await s.t.db.query(
        `UPDATE webhook_endpoints SET failing_since = now() - interval '1 hour 50 minutes' WHERE id = $1`,
        [endpoint.id],
      );
      const second = await cancelNew(s);
      await eventually(
        () => deliveryOf(s, endpoint.id, second),
        (d) => d.attempts === 1 && d.lastStatusCode === 500,
        10_000,
      );
      const still = await adminCall(s, 'get', `/admin/v1/webhooks/${endpoint.id}`).expect(200);
      expect(still.body).toMatchObject({ disabled: false });
      // The first failure with no success since, moved back past the setting (2 hours).
      await s.t.db.query(
        `UPDATE webhook_endpoints SET failing_since = now() - interval '2 hours 10 minutes' WHERE id = $1`,
        [endpoint.id],
      );
      const third = await cancelNew(s);
      const last = await settled(s, endpoint.id, third);
      expect(last).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 500 });
      const shown = await adminCall(s, 'get', `/admin/v1/webhooks/${endpoint.id}`).expect(200);
      expect(shown.body).toMatchObject({ disabled: true, disabledReason: 'failing' });
      // The deliveries waiting for their retry end failed, never attempted again.
      for (const pending of [first, second]) {
        const delivery = await deliveryOf(s, endpoint.id, pending);
        expect(delivery).toMatchObject({ status: 'failed', attempts: 1 });
        expect(delivery.nextAttemptAt).toBeUndefined();
      }
      // A disabled endpoint gets nothing: read once the same event has reached another endpoint
      // (on the same receiver), which gets it alone.
      receiver.answer = () => ({ status: 200 });
      await addEndpoint(s, receiver.url);
      const after = await cancelNew(s);
      await received(receiver, after, 1, 5000);
      expect(receiver.of(after)).toHaveLength(1);
      expect(receiver.received).toHaveLength(4);
    } finally {
      await s.close();
      await receiver.stop();
    }
  }, 60_000);
});

describe('webhooks: concurrency', () => {
  it('makes at most WEBHOOK_CONCURRENCY attempts at once per instance', async () => {
    const s = await startSuite({ WEBHOOK_CONCURRENCY: '2' });
    const receiver = await new WebhookReceiver().start();
    try {
      receiver.answer = () => ({ status: 200, delayMs: 400 });
      const endpoint = await addEndpoint(s, receiver.url);
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push(await cancelNew(s));
      for (const id of ids) await settled(s, endpoint.id, id);
      expect(receiver.mostInFlight).toBe(2);
    } finally {
      await s.close();
      await receiver.stop();
    }
  });

  it('lets a receiver that hangs hold its own slots only, never those of the others', async () => {
    // Three of four slots held by a receiver that never answers (until the 5-s timeout): every
    // other message goes through the one slot left, whichever jobs were fetched together.
    const s = await startSuite({ WEBHOOK_CONCURRENCY: '4', WEBHOOK_TIMEOUT_MS: '5000' });
    const hanging = await new WebhookReceiver().start();
    const answering = await new WebhookReceiver().start();
    try {
      hanging.answer = () => 'hang';
      await addEndpoint(s, hanging.url);
      await addEndpoint(s, answering.url);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(await cancelNew(s));
      // Well within the timeout: no attempt waits for one of the hanging ones to end.
      await eventually(
        () => Promise.resolve(answering.received.length),
        (count) => count === 3,
        4000,
      );
      expect(answering.received.map((r) => r.headers['webhook-id']).sort()).toEqual(ids.sort());
      // The hanging receiver's three attempts under way at once.
      await eventually(
        () => Promise.resolve(hanging.received.length),
        (count) => count === 3,
        1000,
      );
    } finally {
      await hanging.stop();
      await s.close();
      await answering.stop();
    }
  }, 30_000);
});

describe('webhooks: secrets at rest', () => {
  it('stores secrets encrypted with WEBHOOK_SECRETS_KEY, and still signs with them', async () => {
    const s = await startSuite({ WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') });
    const receiver = await new WebhookReceiver().start();
    try {
      const endpoint = await addEndpoint(s, receiver.url);
      const { rows } = await s.t.db.query<{ secret: string }>(
        'SELECT secret FROM webhook_endpoints WHERE id = $1',
        [endpoint.id],
      );
      expect(rows[0].secret).toMatch(/^aes256gcm:/);
      expect(rows[0].secret).not.toContain(endpoint.secret.slice(6));
      const webhookId = await cancelNew(s);
      const [message] = await received(receiver, webhookId, 1, 5000);
      verified(endpoint.secret, message);
    } finally {
      await s.close();
      await receiver.stop();
    }
  });
});
