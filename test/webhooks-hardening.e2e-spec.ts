/**
 * Webhooks against careless and hostile endpoints: hosts that cannot be reached or looked up, a
 * receiver asking to slow down, URLs that reach internal addresses in IPv6 clothing, and more
 * endpoints than the service takes. Every receiver is on loopback; addresses that cannot be
 * reached (multicast: the kernel refuses a TCP connect to one at once) are never sent a byte.
 */
import request from 'supertest';
import { WebhookResolver } from '../src/webhooks/webhook-addresses';
import { CLAIM } from '../src/webhooks/webhooks.sql';
import { sendAttempt, type SenderOptions } from '../src/webhooks/webhook-sender';
import { withClient } from './setup/clusters';
import { eventually } from './support/eventually';
import { nodesOf, type PlanNode } from './support/page-plans';
import { createTestDatabase } from './support/test-app';
import { WebhookReceiver } from './support/webhook-receiver';
import {
  addEndpoint,
  adminCall,
  cancelNew,
  deliveryOf,
  received,
  startWebhookSuite,
  type WebhookSuite,
} from './support/webhook-suite';

/** A resolver that answers `answers[host]`, and never answers for a host it does not know. */
function resolverOf(answers: Record<string, string[]>): WebhookResolver {
  return {
    resolve: (host: string) =>
      host in answers
        ? Promise.resolve(
            answers[host].map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
          )
        : new Promise(() => undefined),
  };
}

function options(resolver: WebhookResolver, more: Partial<SenderOptions> = {}): SenderOptions {
  return { resolver, timeoutMs: 2000, allowPrivate: true, allowHttp: true, ...more };
}

const attempt = (url: string) => ({
  url,
  headers: { 'content-type': 'application/json' },
  body: '{}',
});

describe('one attempt: every failure is a failed attempt', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await receiver.stop();
  });

  it.each(['224.0.0.1', 'ff02::1'])(
    'an https endpoint whose name resolves to %s, where connecting fails at once, is a failed attempt',
    async (address) => {
      // Before, the TLS socket's error came before anything listened, and the process died.
      const result = await sendAttempt(
        attempt('https://unreachable.example.test/hook'),
        options(resolverOf({ 'unreachable.example.test': [address] })),
      );
      expect(result).toEqual({ ok: false, error: expect.stringMatching(/ENETUNREACH/) });
    },
  );

  it('bounds the lookup by the timeout: a name whose DNS never answers fails the attempt in time', async () => {
    const started = Date.now();
    const result = await sendAttempt(
      attempt('https://silent.example.test/hook'),
      options(resolverOf({}), { timeoutMs: 300 }),
    );
    expect(result).toEqual({ ok: false, error: 'no answer within 300 ms' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('holds no other attempt while a lookup hangs', async () => {
    const resolver = resolverOf({ 'receiver.example.test': ['127.0.0.1'] });
    let slowDone = false;
    const slow = sendAttempt(
      attempt('http://silent.example.test/hook'),
      options(resolver, { timeoutMs: 3000 }),
    ).then((r) => {
      slowDone = true;
      return r;
    });
    const port = new URL(receiver.url).port;
    const healthy = await sendAttempt(
      attempt(`http://receiver.example.test:${port}/hook`),
      options(resolver, { timeoutMs: 3000 }),
    );
    expect(healthy).toMatchObject({ ok: true, status: 200 });
    expect(slowDone).toBe(false);
    expect(await slow).toEqual({ ok: false, error: 'no answer within 3000 ms' });
  });

  it('refuses an http:// endpoint at the attempt when http is not allowed, sending nothing', async () => {
    const before = receiver.received.length;
    const result = await sendAttempt(
      attempt(receiver.url),
      options(resolverOf({}), { allowHttp: false }),
    );
    expect(result).toEqual({ ok: false, error: 'refused: http:// endpoints are not allowed' });
    expect(receiver.received.length).toBe(before);
  });

  it("reads a 429's Retry-After, in seconds or as a date", async () => {
    receiver.answer = (_r, i) => ({
      status: 429,
      headers: {
        'retry-after': i % 2 === 0 ? '7' : new Date(Date.now() + 120_000).toUTCString(),
      },
    });
    try {
      const first = await sendAttempt(attempt(receiver.url), options(resolverOf({})));
      const second = await sendAttempt(attempt(receiver.url), options(resolverOf({})));
      const [a, b] = [first, second].sort(
        (x, y) =>
          ('retryAfterSeconds' in x ? (x.retryAfterSeconds ?? 0) : 0) -
          ('retryAfterSeconds' in y ? (y.retryAfterSeconds ?? 0) : 0),
      );
      expect(a).toMatchObject({ ok: false, status: 429, retryAfterSeconds: 7 });
      expect(b).toMatchObject({ ok: false, status: 429, retryAfterSeconds: expect.any(Number) });
      expect((b as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(100);
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  });
});

describe('webhooks: an endpoint that cannot be reached', () => {
  let s: WebhookSuite;
  beforeAll(async () => {
    s = await startWebhookSuite();
    jest
      .spyOn(s.t.app.get(WebhookResolver), 'resolve')
      .mockImplementation((host: string) =>
        host === 'v6only.example.test'
          ? Promise.resolve([{ address: 'ff02::1', family: 6 }])
          : Promise.reject(new Error(`${host}: unknown`)),
      );
  });
  afterAll(async () => {
    await s.close();
  });

  it('records a failed attempt and keeps serving', async () => {
    const endpoint = await addEndpoint(s, 'https://v6only.example.test/hook');
    const webhookId = await cancelNew(s);
    const delivery = await eventually(
      () => deliveryOf(s, endpoint.id, webhookId),
      (d) => d.attempts >= 2,
      15_000,
    );
    expect(delivery.lastError).toMatch(/ENETUNREACH/);
    await request(s.t.http).get('/health/live').expect(200);
  });
});

describe("webhooks: a receiver's Retry-After", () => {
  let s: WebhookSuite;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    s = await startWebhookSuite({ WEBHOOK_RETRY_SECONDS: '1,4' });
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await s.close();
    await receiver.stop();
  });

  const waited = (d: { lastAttemptAt?: string; nextAttemptAt?: string }) =>
    Date.parse(d.nextAttemptAt ?? '') - Date.parse(d.lastAttemptAt ?? '');

  it('waits as long as a 429 asks, within the schedule: no sooner than it, no later than its longest', async () => {
    receiver.answer = () => ({ status: 429, headers: { 'retry-after': '3' } });
    const endpoint = await addEndpoint(s, receiver.url);
    const asked = await cancelNew(s);
    const first = await eventually(
      () => deliveryOf(s, endpoint.id, asked),
      (d) => d.attempts === 1 && d.lastStatusCode === 429,
      10_000,
    );
    // The schedule says about 1 s; the receiver asked for 3.
    expect(waited(first)).toBeGreaterThanOrEqual(3000);
    expect(waited(first)).toBeLessThan(3800);

    receiver.answer = () => ({ status: 429, headers: { 'retry-after': '86400' } });
    const tooLong = await cancelNew(s);
    const capped = await eventually(
      () => deliveryOf(s, endpoint.id, tooLong),
      (d) => d.attempts === 1 && d.lastStatusCode === 429,
      10_000,
    );
    // A day is past the schedule's longest wait (4 s ±10 %): that is the most it waits.
    expect(waited(capped)).toBeGreaterThanOrEqual(3600);
    expect(waited(capped)).toBeLessThan(5200);
  });
});

describe('webhooks: how many endpoints', () => {
  let s: WebhookSuite;
  beforeAll(async () => {
    s = await startWebhookSuite({ WEBHOOK_MAX_ENDPOINTS: '3' });
  });
  afterAll(async () => {
    await s.close();
  });

  it('refuses an endpoint past WEBHOOK_MAX_ENDPOINTS with 409, even when added at once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        adminCall(s, 'post', '/admin/v1/webhooks', {
          url: `https://127.0.0.1/hook-${i}`,
          events: ['order.cancelled'],
        }),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 409);
    expect([created.length, refused.length]).toEqual([3, 2]);
    expect(refused[0].body).toEqual({
      code: 'CONFLICT',
      message: expect.stringMatching(/limit \(WEBHOOK_MAX_ENDPOINTS\)/),
      status: 409,
    });
    await adminCall(s, 'delete', `/admin/v1/webhooks/${created[0].body.id}`).expect(204);
    await adminCall(s, 'post', '/admin/v1/webhooks', {
      url: 'https://127.0.0.1/hook-again',
      events: ['order.cancelled'],
    }).expect(201);
  });
});

describe('webhooks: addresses carried in IPv6 forms and reserved ranges', () => {
  let s: WebhookSuite;
  let answer: string[] = [];
  beforeAll(async () => {
    s = await startWebhookSuite({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    jest
      .spyOn(s.t.app.get(WebhookResolver), 'resolve')
      .mockImplementation((host: string) =>
        host === 'hooks.example.test'
          ? Promise.resolve(
              answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
            )
          : Promise.reject(new Error(`${host}: unknown`)),
      );
  });
  afterAll(async () => {
    await s.close();
  });

  const refused = [
    '64:ff9b::169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    '64:ff9b:1:a9fe:a9:fe00::',
    '2002:7f00:1::',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '::127.0.0.1',
    '::ffff:0:127.0.0.1',
    'fec0::1',
    '198.18.0.1',
    '192.0.0.1',
    '192.0.2.1',
    '192.88.99.1',
  ];

  it.each(refused)('refuses the literal %s on add and on change', async (address) => {
    const host = address.includes(':') ? `[${address}]` : address;
    const added = await adminCall(s, 'post', '/admin/v1/webhooks', {
      url: `https://${host}/in`,
      events: ['order.cancelled'],
    });
    expect([added.status, added.body.code, added.body.message]).toEqual([
      400,
      'INVALID_BODY',
      expect.stringMatching(/^url: .* is not a public address/),
    ]);
    answer = ['93.184.216.34'];
    const ok = await adminCall(s, 'post', '/admin/v1/webhooks', {
      url: 'https://hooks.example.test/in',
      events: ['order.cancelled'],
    }).expect(201);
    const changed = await adminCall(s, 'patch', `/admin/v1/webhooks/${ok.body.id}`, {
      url: `https://${host}/in`,
    });
    expect([changed.status, changed.body.code]).toEqual([400, 'INVALID_BODY']);
    await adminCall(s, 'delete', `/admin/v1/webhooks/${ok.body.id}`).expect(204);
  });

  it.each(refused)(
    'refuses a name that resolves to %s, without telling where it points',
    async (address) => {
      answer = ['93.184.216.34', address];
      const res = await adminCall(s, 'post', '/admin/v1/webhooks', {
        url: 'https://hooks.example.test/in',
        events: ['order.cancelled'],
      });
      expect([res.status, res.body.code, res.body.message]).toEqual([
        400,
        'INVALID_BODY',
        'url: hooks.example.test resolves to an address that is not public',
      ]);
    },
  );

  it('accepts an IPv6 form whose IPv4 address is public', async () => {
    const res = await adminCall(s, 'post', '/admin/v1/webhooks', {
      url: 'https://[64:ff9b::5db8:d822]/in',
      events: ['order.cancelled'],
    });
    expect(res.status).toBe(201);
    await adminCall(s, 'delete', `/admin/v1/webhooks/${res.body.id}`).expect(204);
  });
});

describe('webhooks: deliveries to a receiver that asks to wait', () => {
  it('are made again after it', async () => {
    const s = await startWebhookSuite({ WEBHOOK_RETRY_SECONDS: '1,1' });
    const receiver = await new WebhookReceiver().start();
    try {
      receiver.answer = (_r, i) =>
        i === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 };
      const endpoint = await addEndpoint(s, receiver.url);
      const webhookId = await cancelNew(s);
      await received(receiver, webhookId, 2, 15_000);
      const delivery = await eventually(
        () => deliveryOf(s, endpoint.id, webhookId),
        (d) => d.status === 'delivered',
        10_000,
      );
      expect(delivery.attempts).toBe(2);
    } finally {
      await s.close();
      await receiver.stop();
    }
  });
});

/**
 * How a plan reads the deliveries: the name of each of their indexes it scans (theirs all name
 * the table), `seq` for each scan of the whole table.
 */
function deliveryAccessesOf(plan: PlanNode): string[] {
  return nodesOf(plan).flatMap((node) => {
    const index = node['Index Name'] ?? '';
    if (index.includes('webhook_deliveries')) return [index];
    return node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'webhook_deliveries'
      ? ['seq']
      : [];
  });
}

describe('webhooks: a backlog the statistics have not seen', () => {
  // The deliveries' table analysed while every delivery was delivered, then a backlog of pending
  // ones added, fewer than autovacuum waits for before analysing it again (a tenth of the table):
  // as after an endpoint's or the workers' outage on a database in service for a while.
  it("claims a batch by the deliveries' primary keys, not by reading the backlog", async () => {
    await withClient(await createTestDatabase(), async (db) => {
      const {
        rows: [endpoint],
      } = await db.query<{ id: string }>(
        `INSERT INTO webhook_endpoints (url, events, secret)
         VALUES ('http://127.0.0.1:9/hook', '{order.cancelled}', 'whsec_backlog') RETURNING id`,
      );
      const add = (status: string, count: number) =>
        db.query(
          `INSERT INTO webhook_deliveries (endpoint_id, webhook_id, type, event_at, body, status,
                                           next_attempt_at)
           SELECT $1, 'evt_' || g, 'order.cancelled', now(), '{}', $2, now()
             FROM generate_series(1, $3::int) g`,
          [endpoint.id, status, count],
        );
      await add('delivered', 20_000);
      await db.query('VACUUM ANALYZE webhook_deliveries');
      await add('pending', 1_500);
      const batch = (
        await db.query<{ id: string }>(
          `SELECT id FROM webhook_deliveries WHERE status = 'pending' LIMIT 40`,
        )
      ).rows.map((row) => row.id);

      await db.query(`PREPARE claim AS ${CLAIM.text}`);
      // A named statement's plan: custom for its first runs, then generic.
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        await db.query('BEGIN');
        try {
          await db.query(`SET LOCAL plan_cache_mode = ${mode}`);
          // EXECUTE takes no bound parameters: the batch's ids (from the database) as literals.
          const { rows } = await db.query<{ 'QUERY PLAN': unknown }>(
            `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim('{${batch.join(',')}}', 30000)`,
          );
          const [{ Plan: plan }] = rows[0]['QUERY PLAN'] as [{ Plan: PlanNode }];
          expect({ mode, accesses: deliveryAccessesOf(plan) }).toEqual({
            mode,
            accesses: ['PK_webhook_deliveries'],
          });
          // The whole batch claimed.
          expect(plan['Actual Rows']).toBe(40);
        } finally {
          await db.query('ROLLBACK');
        }
      }
    });
  });
});
