import { createHash } from 'node:crypto';
import { encodeCursor } from '../src/orders/pages/order-cursor';
import { api, expectErrorBody } from './support/client';
import { insertOrders, OrderFixture, statusOf } from './support/orders';
import { testAppPerSuite } from './support/suite-app';
import { createTestApp, TestApp } from './support/test-app';

const INT64_MAX = '9223372036854775807';
const INT64_MIN = '-9223372036854775808';
const LIST = '/v2/store/orders';

interface Page {
  data: { id: number; shipDate?: string; status: string }[];
  hasMore: boolean;
  nextCursor?: string;
}

describe('orders v2', () => {
  const app = testAppPerSuite();
  beforeEach(() => app.t.db.query('TRUNCATE orders'));

  /** Every page of `query`, following nextCursor: the ids in the order they came. */
  async function walk(query: string, limit: number): Promise<number[]> {
    const ids: number[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 1000; pages++) {
      const params = new URLSearchParams(query);
      params.set('limit', String(limit));
      if (cursor !== undefined) params.set('cursor', cursor);
      const page = (await app.client.get(`${LIST}?${params.toString()}`).expect(200)).body as Page;
      ids.push(...page.data.map((order) => order.id));
      expect(page.data.length).toBeLessThanOrEqual(limit);
      if (!page.hasMore) {
        expect(page.nextCursor).toBeUndefined();
        return ids;
      }
      expect(page.data).toHaveLength(limit);
      cursor = page.nextCursor;
    }
    throw new Error('the walk did not end');
  }

  describe('GET /v2/store/orders', () => {
    it('answers the first page as {data, hasMore, nextCursor} with the v1 Order JSON', async () => {
      await insertOrders(app.t.db, [
        { id: INT64_MIN, petId: INT64_MIN, quantity: 1, shipDate: '2026-11-22T11:00:00+01:00' },
        { id: '9007199254740993', petId: '9007199254740993', status: 'shipped', complete: true },
        { id: INT64_MAX, status: 'cancelled' },
      ]);
      const res = await app.client.get(`${LIST}?limit=2`).expect(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const { nextCursor } = res.body as Page;
      expect(nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(res.text).toBe(
        `{"data":[{"id":${INT64_MIN},"petId":${INT64_MIN},"quantity":1,` +
          `"shipDate":"2026-11-22T10:00:00.000Z","complete":false,"status":"pending"},` +
          `{"id":9007199254740993,"petId":9007199254740993,"complete":true,"status":"shipped"}],` +
          `"hasMore":true,"nextCursor":"${nextCursor}"}`,
      );

      const last = await app.client.get(`${LIST}?limit=2&cursor=${nextCursor}`).expect(200);
      expect(last.text).toBe(
        `{"data":[{"id":${INT64_MAX},"complete":false,"status":"cancelled"}],"hasMore":false}`,
      );
      expect(last.headers.link).toBeUndefined();
    });

    it('answers an empty page for an empty store, and a default page of 100', async () => {
      expect((await app.client.get(LIST).expect(200)).text).toBe('{"data":[],"hasMore":false}');
      await app.t.db.query(`INSERT INTO orders (id) SELECT g FROM generate_series(1, 150) g`);
      const page = (await app.client.get(LIST).expect(200)).body as Page;
      expect(page.data).toHaveLength(100);
      expect(page.hasMore).toBe(true);
    });

    it('links the next page by its absolute URL, keeping the query (RFC 8288)', async () => {
      await app.t.db.query(
        `INSERT INTO orders (id, status) SELECT g, 'pending' FROM generate_series(1, 5) g`,
      );
      const first = await app.client
        .get(`${LIST}?status=pending&limit=2&sort=-id`)
        .set('Host', 'orders.test:8080')
        .expect(200);
      const link = first.headers.link;
      const match = /^<(http:\/\/orders\.test:8080\/v2\/store\/orders\?[^>]+)>; rel="next"$/.exec(
        link,
      );
      expect(match).not.toBeNull();
      const next = new URL(match?.[1] ?? '');
      expect(Object.fromEntries(next.searchParams)).toEqual({
        status: 'pending',
        limit: '2',
        sort: '-id',
        cursor: (first.body as Page).nextCursor,
      });
      const second = await app.client.get(`${next.pathname}${next.search}`).expect(200);
      expect((second.body as Page).data.map((o) => o.id)).toEqual([3, 2]);
    });

    it('filters by status, pet, completeness and ship-date range, combined with AND', async () => {
      await insertOrders(app.t.db, [
        { id: '1', petId: '7', status: 'pending', shipDate: '2026-11-22T10:00:00Z' },
        {
          id: '2',
          petId: '7',
          status: 'shipped',
          complete: true,
          shipDate: '2026-11-23T10:00:00Z',
        },
        { id: '3', petId: '8', status: 'cancelled', shipDate: '2026-11-24T10:00:00Z' },
        { id: '4', petId: '7', status: 'pending' },
        { id: '5', status: 'shipped', complete: true, shipDate: '2026-11-22T09:59:59.999Z' },
      ]);
      const ids = async (query: string): Promise<number[]> =>
        ((await app.client.get(`${LIST}?${query}`).expect(200)).body as Page).data.map((o) => o.id);
      expect(await ids('status=pending')).toEqual([1, 4]);
      expect(await ids('status=cancelled,shipped')).toEqual([2, 3, 5]);
      expect(await ids('status=pending,shipped,cancelled')).toEqual([1, 2, 3, 4, 5]);
      expect(await ids('petId=7')).toEqual([1, 2, 4]);
      expect(await ids('complete=true')).toEqual([2, 5]);
      expect(await ids('complete=false')).toEqual([1, 3, 4]);
      // from <= shipDate < to; an order without a ship date never matches a bound.
      expect(await ids('shipDateFrom=2026-11-22T10:00:00Z')).toEqual([1, 2, 3]);
      expect(await ids('shipDateTo=2026-11-23T10:00:00Z')).toEqual([1, 5]);
      expect(
        await ids('shipDateFrom=2026-11-22T11:00:00%2B01:00&shipDateTo=2026-11-24T10:00:00Z'),
      ).toEqual([1, 2]);
      expect(await ids('petId=7&status=pending&complete=false&sort=-id')).toEqual([4, 1]);
      expect(await ids('petId=9223372036854775807')).toEqual([]);
    });

    describe('sorts every page, ties by id in the same direction, undated orders last', () => {
      const orders: OrderFixture[] = [
        { id: '1', shipDate: '2026-11-23T10:00:00Z' },
        { id: '2' },
        { id: '3', shipDate: '2026-11-22T10:00:00.000001Z' },
        { id: '4', shipDate: '2026-11-23T10:00:00Z' },
        { id: '5' },
        { id: '6', shipDate: '2026-11-22T10:00:00Z' },
        { id: '7', shipDate: '2026-11-23T10:00:00Z' },
        { id: '8' },
      ];
      it.each([
        ['id', [1, 2, 3, 4, 5, 6, 7, 8]],
        ['-id', [8, 7, 6, 5, 4, 3, 2, 1]],
        // 6 and 3 are a microsecond apart: cursors must keep the exact instant.
        ['shipDate', [6, 3, 1, 4, 7, 2, 5, 8]],
        ['-shipDate', [7, 4, 1, 3, 6, 8, 5, 2]],
      ])('sort=%s, at every page size', async (sort, expected) => {
        await insertOrders(app.t.db, orders);
        for (const limit of [1, 2, 3, 5, 8, 1000]) {
          expect(await walk(`sort=${sort}`, limit)).toEqual(expected);
        }
      });

      it('within a status, and within a ship-date range', async () => {
        await insertOrders(app.t.db, orders);
        await app.t.db.query(`UPDATE orders SET status = 'shipped' WHERE id IN (3, 5, 7)`);
        expect(await walk('status=pending&sort=shipDate', 2)).toEqual([6, 1, 4, 2, 8]);
        expect(await walk('status=pending&sort=-shipDate', 2)).toEqual([4, 1, 6, 8, 2]);
        expect(
          await walk(
            'shipDateFrom=2026-11-22T10:00:00Z&shipDateTo=2026-11-23T10:00:00Z&sort=-shipDate',
            1,
          ),
        ).toEqual([3, 6]);
      });
    });

    it('lets the limit change from page to page', async () => {
      await app.t.db.query(`INSERT INTO orders (id) SELECT g FROM generate_series(1, 10) g`);
      const first = (await app.client.get(`${LIST}?sort=-id&limit=3`).expect(200)).body as Page;
      const second = (
        await app.client.get(`${LIST}?limit=5&sort=-id&cursor=${first.nextCursor}`).expect(200)
      ).body as Page;
      expect(second.data.map((o) => o.id)).toEqual([7, 6, 5, 4, 3]);
    });
  });

  describe('strict parameters', () => {
    const SAMPLE_CURSOR_FREE = [
      // unknown
      ['foo=1', 'foo'],
      ['Status=pending', 'Status'],
      ['offset=10', 'offset'],
      ['page=2', 'page'],
      ['status[]=pending', 'status[]'],
      // repeated
      ['status=pending&status=shipped', 'status'],
      ['limit=10&limit=10', 'limit'],
      ['sort=id&sort=id', 'sort'],
      // empty
      ['status=', 'status'],
      ['petId=', 'petId'],
      ['complete', 'complete'],
      ['cursor=', 'cursor'],
      ['shipDateFrom=', 'shipDateFrom'],
      // status
      ['status=open', 'status'],
      ['status=Pending', 'status'],
      ['status=pending,', 'status'],
      ['status=pending,,shipped', 'status'],
      ['status=pending,pending', 'status'],
      ['status=pending%20', 'status'],
      // int64
      ['petId=9223372036854775808', 'petId'],
      ['petId=-9223372036854775809', 'petId'],
      ['petId=1.5', 'petId'],
      ['petId=1e3', 'petId'],
      ['petId=%2B5', 'petId'],
      ['petId=abc', 'petId'],
      // boolean
      ['complete=yes', 'complete'],
      ['complete=TRUE', 'complete'],
      ['complete=1', 'complete'],
      // date-time
      ['shipDateFrom=2026-11-22T10:00:00', 'shipDateFrom'],
      ['shipDateFrom=2026-11-22', 'shipDateFrom'],
      ['shipDateTo=2026-11-22T10:00:00 01:00', 'shipDateTo'],
      ['shipDateTo=2026-02-30T10:00:00Z', 'shipDateTo'],
      ['shipDateTo=1700000000', 'shipDateTo'],
      ['shipDateFrom=2026-11-22T10:00:00Z&shipDateTo=2026-11-22T10:00:00Z', 'shipDateFrom'],
      ['shipDateFrom=2026-11-23T00:00:00Z&shipDateTo=2026-11-23T01:00:00%2B02:00', 'shipDateFrom'],
      // sort
      ['sort=petId', 'sort'],
      ['sort=%2BshipDate', 'sort'],
      ['sort=ID', 'sort'],
      // limit
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=10.5', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=99999999999999999999', 'limit'],
    ];

    it.each(SAMPLE_CURSOR_FREE)('?%s is 400 INVALID_QUERY naming %s', async (query, name) => {
      await insertOrders(app.t.db, [{ id: '1' }]);
      const res = await app.client.get(`${LIST}?${query}`).expect(400);
      expectErrorBody(res, 400, 'INVALID_QUERY');
      expect((res.body as { message: string }).message).toContain(name);
    });

    it('holds at least 25 bad queries', () => {
      expect(SAMPLE_CURSOR_FREE.length).toBeGreaterThanOrEqual(25);
    });

    it('accepts every rule at its edge', async () => {
      for (const query of [
        'limit=1',
        'limit=1000',
        'limit=0100',
        `petId=${INT64_MIN}`,
        'petId=-0',
        'shipDateFrom=2026-11-22T10:00:00Z&shipDateTo=2026-11-22T10:00:00.000001Z',
        'shipDateFrom=2026-11-22t10:00:00.123456789z',
        'status=cancelled,pending,shipped',
        'sort=-shipDate&complete=true',
      ]) {
        await app.client.get(`${LIST}?${query}`).expect(200);
      }
    });
  });

  describe('cursors', () => {
    let cursor: string;
    beforeEach(async () => {
      await insertOrders(app.t.db, [
        { id: '1', status: 'pending', petId: '7' },
        { id: '2', status: 'pending', petId: '7' },
        { id: '3', status: 'pending', petId: '7' },
      ]);
      const page = await app.client.get(`${LIST}?status=pending&petId=7&limit=1`).expect(200);
      cursor = (page.body as Page).nextCursor ?? '';
    });

    it('work with the same filters, however spelled, in any order', async () => {
      const res = await app.client
        .get(`${LIST}?cursor=${cursor}&petId=007&status=pending&limit=1`)
        .expect(200);
      expect((res.body as Page).data.map((o) => o.id)).toEqual([2]);
    });

    it.each([
      ['another filter', 'status=pending&petId=8'],
      ['a filter left out', 'status=pending'],
      ['a filter added', 'status=pending&petId=7&complete=false'],
      ['another status list', 'status=pending,shipped&petId=7'],
      ['another sort', 'status=pending&petId=7&sort=-id'],
      ['the default sort spelled as another', 'status=pending&petId=7&sort=shipDate'],
    ])('are 400 INVALID_CURSOR with %s', async (_what, query) => {
      const res = await app.client.get(`${LIST}?${query}&cursor=${cursor}`).expect(400);
      expectErrorBody(res, 400, 'INVALID_CURSOR');
    });

    it('are 400 INVALID_CURSOR when altered or made up', async () => {
      const json = Buffer.from(cursor, 'base64url').toString('utf8');
      const forged = Buffer.from(json.replace('"1"', '"2"')).toString('base64url');
      const flipped = `${cursor.slice(0, 10)}${cursor[10] === 'x' ? 'y' : 'x'}${cursor.slice(11)}`;
      for (const bad of [forged, flipped, `${cursor}x`, cursor.slice(0, -2), 'abc', '%3D%3D']) {
        const res = await app.client
          .get(`${LIST}?status=pending&petId=7&cursor=${bad}`)
          .expect(400);
        expectErrorBody(res, 400, 'INVALID_CURSOR');
      }
    });
  });

  describe('cursors, signed with the deployment secret', () => {
    const SECRET = 'the-cursor-secret-of-another-deployment';
    let configured: TestApp;
    beforeAll(async () => {
      // Another deployment on the same orders: CURSOR_SECRET set, where `t` reads the database's.
      configured = await createTestApp({
        env: { CURSOR_SECRET: SECRET },
        databaseUrl: app.t.databaseUrl,
      });
    });
    afterAll(() => configured.close());
    beforeEach(() =>
      insertOrders(app.t.db, [
        { id: '1', shipDate: '2026-02-27T10:00:00Z' },
        { id: '2', shipDate: '2026-02-28T10:00:00Z' },
        { id: '3', shipDate: '2026-03-01T10:00:00Z' },
      ]),
    );

    /** A cursor as anyone could have made one for the previous version: no secret needed. */
    function minted(payload: unknown[]): string {
      const digest = (text: string): string =>
        createHash('sha256').update(text).digest('base64url').slice(0, 16);
      const binding = digest(JSON.stringify(['shipDate', null, null, null, null, null]));
      const signed = [1, binding, ...payload];
      return Buffer.from(JSON.stringify([...signed, digest(JSON.stringify(signed))])).toString(
        'base64url',
      );
    }

    it.each([
      ['30 February', '2026-02-30T00:00:00.000000Z'],
      ['year 0000', '0000-01-01T00:00:00.000000Z'],
      ['month 13', '2026-13-01T00:00:00.000000Z'],
    ])('refuse one made by hand, with a ship date of %s: 400, not 500', async (_what, date) => {
      const res = await app.client
        .get(`${LIST}?sort=shipDate&cursor=${minted(['1', date])}`)
        .expect(400);
      expectErrorBody(res, 400, 'INVALID_CURSOR');
    });

    it('refuse one made by hand that names a real order', async () => {
      const res = await app.client
        .get(`${LIST}?sort=shipDate&cursor=${minted(['1', '2026-02-27T10:00:00.000000Z'])}`)
        .expect(400);
      expectErrorBody(res, 400, 'INVALID_CURSOR');
    });

    it('are good on every instance of the deployment, and refused by another deployment', async () => {
      const first = (await app.client.get(`${LIST}?sort=shipDate&limit=1`).expect(200))
        .body as Page;
      const cursor = first.nextCursor ?? '';
      // A second instance of the same deployment reads the same secret from the database.
      // (CURSOR_SECRET empty: unset, whatever the other app left in process.env.)
      const sibling = await createTestApp({
        env: { CURSOR_SECRET: '' },
        databaseUrl: app.t.databaseUrl,
      });
      try {
        const next = await api(sibling)
          .get(`${LIST}?sort=shipDate&limit=1&cursor=${cursor}`)
          .expect(200);
        expect((next.body as Page).data.map((o) => o.id)).toEqual([2]);
      } finally {
        await sibling.close();
      }
      const elsewhere = await api(configured)
        .get(`${LIST}?sort=shipDate&limit=1&cursor=${cursor}`)
        .expect(400);
      expectErrorBody(elsewhere, 400, 'INVALID_CURSOR');
      const theirs = (
        (await api(configured).get(`${LIST}?sort=shipDate&limit=1`).expect(200)).body as Page
      ).nextCursor;
      await api(configured).get(`${LIST}?sort=shipDate&limit=1&cursor=${theirs}`).expect(200);
      expectErrorBody(
        await app.client.get(`${LIST}?sort=shipDate&limit=1&cursor=${theirs}`).expect(400),
        400,
        'INVALID_CURSOR',
      );
    });

    it('refuse an impossible ship date even when signed with the secret: 400, not 500', async () => {
      const key = Buffer.from(SECRET);
      for (const shipDate of ['2026-02-30T00:00:00.000000Z', '0000-01-01T00:00:00.000000Z']) {
        const cursor = encodeCursor(key, {}, 'shipDate', { id: '1', shipDate });
        const res = await api(configured).get(`${LIST}?sort=shipDate&cursor=${cursor}`).expect(400);
        expectErrorBody(res, 400, 'INVALID_CURSOR');
      }
    });
  });

  describe('DELETE /v2/store/orders/{orderId}', () => {
    it('cancels with the rules of v1', async () => {
      const [pending, shipped] = await insertOrders(app.t.db, [
        { status: 'pending' },
        { status: 'shipped' },
      ]);
      expect((await app.client.delete(`${LIST}/${pending}`).expect(204)).text).toBe('');
      expect(await statusOf(app.t.db, pending)).toBe('cancelled');
      await app.client.delete(`${LIST}/${pending}`).expect(204);
      expectErrorBody(
        await app.client.delete(`${LIST}/${shipped}`).expect(409),
        409,
        'ORDER_ALREADY_SHIPPED',
      );
      expect(await statusOf(app.t.db, shipped)).toBe('shipped');
      expectErrorBody(
        await app.client.delete(`${LIST}/424242`).expect(404),
        404,
        'ORDER_NOT_FOUND',
      );
      expectErrorBody(await app.client.delete(`${LIST}/1e3`).expect(400), 400, 'INVALID_ORDER_ID');
    });
  });

  describe('beside v1', () => {
    it('v1 lists as before, and names v2 as its successor (RFC 5829)', async () => {
      await insertOrders(app.t.db, [
        { id: '1', petId: '7' },
        { id: '2', status: 'shipped' },
      ]);
      const res = await app.client.get('/v1/store/orders').expect(200);
      expect(res.headers.link).toBe('</v2/store/orders>; rel="successor-version"');
      expect(res.text).toBe(
        '[{"id":1,"petId":7,"complete":false,"status":"pending"},' +
          '{"id":2,"complete":false,"status":"shipped"}]',
      );
    });

    it('writes an order exactly as v1 does, a ship date with microseconds included', async () => {
      await insertOrders(app.t.db, [
        { id: '1', petId: '7', quantity: 2, shipDate: '2026-05-01T10:00:00.123999Z' },
        { id: '2', shipDate: '1999-12-31T23:59:59.999999Z', complete: true, status: 'shipped' },
        { id: '3', shipDate: '2026-05-01T10:00:00Z' },
      ]);
      const v1 = await app.client.get('/v1/store/orders').expect(200);
      const v2 = await app.client.get(LIST).expect(200);
      // Milliseconds, truncated (PostgreSQL's MS), in both versions alike.
      expect(v1.text).toContain('"shipDate":"2026-05-01T10:00:00.123Z"');
      expect(v1.text).toContain('"shipDate":"1999-12-31T23:59:59.999Z"');
      expect(v2.text).toBe(`{"data":${v1.text},"hasMore":false}`);
    });

    it('asks for a key, with the same challenge and errors', async () => {
      const res = await api(app.t, null).get(LIST).expect(401);
      expectErrorBody(res, 401, 'UNAUTHORIZED');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="store-orders"');
      expectErrorBody(await app.client.send('put', LIST).expect(405), 405, 'METHOD_NOT_ALLOWED');
      expectErrorBody(await app.client.get('/v2/store/nothing').expect(404), 404, 'NOT_FOUND');
    });

    it('counts v1 and v2 requests against the same windows of a key', async () => {
      const { key } = await app.t.keys.issue({
        plan: 'enterprise',
        limits: { perMinute: 4, perDay: 1000 },
      });
      const keyed = api(app.t, key);
      const remaining = async (path: string, status: number): Promise<string> =>
        (await keyed.get(path).expect(status)).headers['x-ratelimit-remaining'];
      expect(await remaining('/v1/store/orders', 200)).toBe('3');
      expect(await remaining(LIST, 200)).toBe('2');
      expect(await remaining('/v1/store/orders', 200)).toBe('1');
      expect(await remaining(`${LIST}?limit=1`, 200)).toBe('0');
      expectErrorBody(await keyed.get(LIST).expect(429), 429, 'RATE_LIMIT_EXCEEDED');
      expectErrorBody(await keyed.get('/v1/store/orders').expect(429), 429, 'RATE_LIMIT_EXCEEDED');
    });
  });
});
