import { StoreOrdersClient, StoreOrdersError } from 'store-orders-client';
import { insertOrders, statusOf } from '../../../test/support/orders';
import { recordingFetch, servicePerSuite } from './service';

const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The rejection of `promise`, which must be a StoreOrdersError. */
async function failureOf(promise: Promise<unknown>): Promise<StoreOrdersError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreOrdersError);
  return error as StoreOrdersError;
}

describe('the TypeScript client against the running service', () => {
  const service = servicePerSuite();
  const client = (apiKey = service.t.key, recorder = recordingFetch()) =>
    new StoreOrdersClient({
      baseUrl: `${service.url}/`,
      adminBaseUrl: service.adminUrl,
      apiKey,
      fetch: recorder.fetch,
    });

  beforeEach(async () => {
    await service.t.db.query('TRUNCATE orders');
  });

  it('lists every order (v1), ids as exact strings, and reads the rate-limit headers', async () => {
    const [pending, shipped] = await insertOrders(service.t.db, [
      { petId: '7', quantity: 2, status: 'pending' },
      { status: 'shipped', shipDate: '2026-11-22T10:00:00.000Z' },
    ]);
    const api = client();
    expect(api.rateLimit).toBeUndefined();
    expect(await api.orders.list()).toEqual([
      { id: pending, petId: '7', quantity: 2, complete: false, status: 'pending' },
      {
        id: shipped,
        shipDate: '2026-11-22T10:00:00.000Z',
        complete: false,
        status: 'shipped',
      },
    ]);
    const first = api.rateLimit;
    expect(first).toEqual({
      limit: 1_000_000,
      remaining: expect.any(Number),
      reset: expect.any(Number),
    });
    await api.orders.list();
    expect(api.rateLimit?.remaining).toBe((first?.remaining ?? 0) - 1);
    expect(api.rateLimit?.reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('walks every page of 1,000 orders, 7 to a page, following nextCursor', async () => {
    await service.t.db.query(
      `INSERT INTO orders (pet_id, ship_date, status)
       SELECT g % 5, timestamptz '2026-11-22' + (g % 11) * interval '1 hour',
              (ARRAY['pending', 'shipped', 'cancelled'])[g % 3 + 1]
         FROM generate_series(1, 1000) AS g`,
    );
    const recorder = recordingFetch();
    const api = client(service.t.key, recorder);
    const seen: string[] = [];
    for await (const order of api.orders.each({ limit: 7 })) seen.push(order.id ?? '');

    const { rows } = await service.t.db.query<{ id: string }>('SELECT id FROM orders ORDER BY id');
    expect(seen).toEqual(rows.map((row) => row.id));
    expect(recorder.sent).toHaveLength(Math.ceil(1000 / 7));
    const cursors = recorder.sent.map(({ request }) => new URL(request.url).searchParams);
    expect(cursors[0].get('cursor')).toBeNull();
    expect(cursors.slice(1).every((query) => query.get('cursor') !== null)).toBe(true);
    expect(cursors.every((query) => query.get('limit') === '7')).toBe(true);
  });

  it('takes every v2 filter and sort, several statuses or one', async () => {
    await service.t.db.query(
      `INSERT INTO orders (pet_id, ship_date, complete, status)
       SELECT g % 3, CASE WHEN g % 4 = 0 THEN NULL
                          ELSE timestamptz '2026-11-22' + (g % 9) * interval '1 day' END,
              g % 2 = 0, (ARRAY['pending', 'shipped', 'cancelled'])[g % 3 + 1]
         FROM generate_series(1, 300) AS g`,
    );
    const api = client();
    const walked: string[] = [];
    for await (const order of api.orders.each({
      status: ['pending', 'shipped'],
      petId: 1n,
      complete: false,
      shipDateFrom: '2026-11-23T00:00:00Z',
      shipDateTo: '2026-11-29T00:00:00+00:00',
      sort: '-shipDate',
      limit: 4,
    })) {
      walked.push(order.id ?? '');
    }
    const { rows } = await service.t.db.query<{ id: string }>(
      `SELECT id FROM orders
        WHERE status IN ('pending', 'shipped') AND pet_id = 1 AND NOT complete
          AND ship_date >= '2026-11-23Z' AND ship_date < '2026-11-29Z'
        ORDER BY ship_date DESC, id DESC`,
    );
    expect(rows.length).toBeGreaterThan(4);
    expect(walked).toEqual(rows.map((row) => row.id));

    const pending: string[] = [];
    for await (const order of api.orders.each({ status: 'pending', limit: 50 })) {
      expect(order.status).toBe('pending');
      pending.push(order.id ?? '');
    }
    const counted = await service.t.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM orders WHERE status = 'pending'",
    );
    expect(pending).toHaveLength(Number(counted.rows[0].n));
  });

  it('cancels: 204 resolves (twice too), 409 and 404 throw typed errors, never retried', async () => {
    const [pending, shipped] = await insertOrders(service.t.db, [
      { status: 'pending' },
      { status: 'shipped' },
    ]);
    const recorder = recordingFetch();
    const api = client(service.t.key, recorder);

    await expect(api.orders.cancel(pending)).resolves.toBeUndefined();
    expect(await statusOf(service.t.db, pending)).toBe('cancelled');
    await expect(api.orders.cancel(BigInt(pending))).resolves.toBeUndefined();

    const conflict = await failureOf(api.orders.cancel(shipped));
    expect(conflict).toMatchObject({ code: 'ORDER_ALREADY_SHIPPED', status: 409 });
    expect(conflict.message).toEqual(expect.any(String));
    expect(conflict.requestId).toMatch(REQUEST_ID);
    expect(conflict.retryAfter).toBeUndefined();
    expect(await statusOf(service.t.db, shipped)).toBe('shipped');

    const missing = await failureOf(api.orders.cancel('424242'));
    expect(missing).toMatchObject({ code: 'ORDER_NOT_FOUND', status: 404 });
    expect(missing.requestId).toMatch(REQUEST_ID);

    expect(recorder.sent.map(({ request, status }) => [request.method, status])).toEqual([
      ['DELETE', 204],
      ['DELETE', 204],
      ['DELETE', 409],
      ['DELETE', 404],
    ]);
  });

  it('throws 403 INSUFFICIENT_SCOPE as a typed error for a key without the scope', async () => {
    const [order] = await insertOrders(service.t.db, [{ status: 'pending' }]);
    const { key } = await service.t.keys.issue({
      plan: 'enterprise',
      limits: { perMinute: 1000, perDay: 10_000 },
      scopes: ['orders:read'],
    });
    const recorder = recordingFetch();
    const reader = client(key, recorder);
    await expect(reader.orders.list()).resolves.toHaveLength(1);

    const refused = await failureOf(reader.orders.cancel(order));
    expect(refused).toMatchObject({
      name: 'StoreOrdersError',
      code: 'INSUFFICIENT_SCOPE',
      status: 403,
    });
    expect(refused.message).toContain('orders:cancel');
    expect(refused.requestId).toMatch(REQUEST_ID);
    expect(reader.rateLimit).toEqual(expect.objectContaining({ limit: 1000 }));
    expect(recorder.sent).toHaveLength(2);
    expect(await statusOf(service.t.db, order)).toBe('pending');
  });

  it('keeps ids above 2^53 exact, listed, paged and cancelled', async () => {
    const beyond = '9007199254740993'; // 2^53 + 1: as a JavaScript number, 2^53
    const largest = '9223372036854775807';
    await insertOrders(service.t.db, [
      { id: beyond, petId: largest, status: 'pending' },
      { id: largest, petId: beyond, status: 'pending' },
    ]);
    const api = client();
    const expected = [
      { id: beyond, petId: largest, complete: false, status: 'pending' },
      { id: largest, petId: beyond, complete: false, status: 'pending' },
    ];
    expect(await api.orders.list()).toEqual(expected);
    const paged = [];
    for await (const order of api.orders.each({ petId: largest, limit: 1 })) paged.push(order);
    expect(paged).toEqual([expected[0]]);

    await api.orders.cancel(beyond);
    expect(await statusOf(service.t.db, beyond)).toBe('cancelled');
    expect(await statusOf(service.t.db, largest)).toBe('pending');
    await expect(api.orders.cancel(Number(beyond))).rejects.toThrow(RangeError);
  });

  it('sends the key in the Authorization header only, to the API and the admin listener', async () => {
    const { key } = await service.t.keys.issue({
      plan: 'enterprise',
      limits: { perMinute: 1000, perDay: 10_000 },
      scopes: ['*', 'keys:admin'],
    });
    const recorder = recordingFetch();
    const api = client(key, recorder);
    await api.orders.list();
    const keys = await api.admin.GET('/admin/v1/keys');
    expect(keys.response.status).toBe(200);
    expect(keys.data?.data.length).toBeGreaterThanOrEqual(2);

    expect(recorder.sent.map(({ request }) => new URL(request.url).pathname)).toEqual([
      '/v1/store/orders',
      '/admin/v1/keys',
    ]);
    for (const { request } of recorder.sent) {
      expect(request.url).not.toContain(key);
      const carrying = [...request.headers].filter(([, value]) => value.includes(key));
      expect(carrying).toEqual([['authorization', `Bearer ${key}`]]);
    }
  });
});
