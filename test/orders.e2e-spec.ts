import { Client } from 'pg';
import { configInheriting } from '../src/database/statement-call';
import { ORDER_STATUS } from '../src/orders/orders.sql';
import { expectErrorBody } from './support/client';
import { insertOrders, statusOf } from './support/orders';
import { testAppPerSuite } from './support/suite-app';

const INT64_MAX = '9223372036854775807';
const INT64_MIN = '-9223372036854775808';

describe('orders', () => {
  const app = testAppPerSuite();
  beforeEach(() => app.t.db.query('TRUNCATE orders'));

  describe('GET /v1/store/orders', () => {
    it('answers an empty array when the store has no orders', async () => {
      const res = await app.client.get('/v1/store/orders').expect(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.text).toBe('[]');
    });

    it('lists every order in every status by id, nulls left out, ship dates in UTC', async () => {
      await insertOrders(app.t.db, [
        {
          id: '30',
          petId: '7',
          quantity: 2,
          shipDate: '2026-11-22T11:00:00+01:00',
          complete: true,
          status: 'shipped',
        },
        {
          id: '10',
          petId: '5',
          quantity: 1,
          shipDate: '2026-11-23T08:30:00.123Z',
          status: 'pending',
        },
        { id: '20', status: 'cancelled' },
      ]);
      const res = await app.client.get('/v1/store/orders').expect(200);
      expect(res.body).toEqual([
        {
          id: 10,
          petId: 5,
          quantity: 1,
          shipDate: '2026-11-23T08:30:00.123Z',
          complete: false,
          status: 'pending',
        },
        { id: 20, complete: false, status: 'cancelled' },
        {
          id: 30,
          petId: 7,
          quantity: 2,
          shipDate: '2026-11-22T10:00:00.000Z',
          complete: true,
          status: 'shipped',
        },
      ]);
    });

    it('writes int64 ids and pet ids as exact, unquoted JSON integers at both extremes', async () => {
      await insertOrders(app.t.db, [
        { id: INT64_MIN, petId: INT64_MIN },
        { id: '9007199254740993', petId: '9007199254740993' },
        { id: INT64_MAX, petId: INT64_MAX },
      ]);
      const res = await app.client.get('/v1/store/orders').expect(200);
      expect(res.text).toBe(
        `[{"id":${INT64_MIN},"petId":${INT64_MIN},"complete":false,"status":"pending"},` +
          `{"id":9007199254740993,"petId":9007199254740993,"complete":false,"status":"pending"},` +
          `{"id":${INT64_MAX},"petId":${INT64_MAX},"complete":false,"status":"pending"}]`,
      );
    });

    it('streams a list of several cursor batches as one exact JSON array', async () => {
      await app.t.db.query(
        `INSERT INTO orders (id, pet_id, quantity, complete, status)
         SELECT g, g * 3, g % 7, g % 2 = 0, (ARRAY['pending','shipped','cancelled'])[g % 3 + 1]
           FROM generate_series(1, 2500) AS g`,
      );
      const res = await app.client.get('/v1/store/orders').expect(200);
      const expected = Array.from({ length: 2500 }, (_, i) => {
        const g = i + 1;
        return `{"id":${g},"petId":${g * 3},"quantity":${g % 7},"complete":${g % 2 === 0},"status":"${['pending', 'shipped', 'cancelled'][g % 3]}"}`;
      });
      expect(res.text).toBe(`[${expected.join(',')}]`);
    });
    // The first 1,001 orders come from one query, the rest from a cursor after the last id sent:
    // around that seam, with ids beyond 2^53 (the id the cursor continues from must be exact).
    it.each([1_000, 1_001, 1_002, 3_003])(
      'lists %i orders across the first query and the cursor, each exactly once, in order',
      async (count) => {
        const base = 9007199254740000n;
        await app.t.db.query(
          `INSERT INTO orders (id, pet_id, complete, status)
           SELECT $1::bigint + g, g, false, 'pending' FROM generate_series(1, $2::int) AS g`,
          [base.toString(), count],
        );
        const res = await app.client.get('/v1/store/orders').expect(200);
        const expected = Array.from(
          { length: count },
          (_, i) =>
            `{"id":${base + BigInt(i + 1)},"petId":${i + 1},"complete":false,"status":"pending"}`,
        );
        expect(res.text).toBe(`[${expected.join(',')}]`);
      },
    );
  });

  describe('DELETE /v1/store/orders/{orderId}', () => {
    it('cancels a pending order and answers 204 with no body', async () => {
      const [id] = await insertOrders(app.t.db, [{ status: 'pending' }]);
      const res = await app.client.delete(`/v1/store/orders/${id}`).expect(204);
      expect(res.text).toBe('');
      expect(await statusOf(app.t.db, id)).toBe('cancelled');
    });

    it('answers 204 again for an order already cancelled and changes nothing', async () => {
      const [id] = await insertOrders(app.t.db, [{ status: 'cancelled', petId: '4' }]);
      await app.client.delete(`/v1/store/orders/${id}`).expect(204);
      await app.client.delete(`/v1/store/orders/${id}`).expect(204);
      expect(await statusOf(app.t.db, id)).toBe('cancelled');
    });

    it('refuses a shipped order with 409 ORDER_ALREADY_SHIPPED and leaves it shipped', async () => {
      const [id] = await insertOrders(app.t.db, [{ status: 'shipped' }]);
      const res = await app.client.delete(`/v1/store/orders/${id}`).expect(409);
      expectErrorBody(res, 409, 'ORDER_ALREADY_SHIPPED');
      expect(await statusOf(app.t.db, id)).toBe('shipped');
    });

    it('answers 404 ORDER_NOT_FOUND for an id that does not exist', async () => {
      const res = await app.client.delete('/v1/store/orders/424242').expect(404);
      expectErrorBody(res, 404, 'ORDER_NOT_FOUND');
    });

    it('cancels exactly the row named by an id beyond 2^53, never its rounded neighbour', async () => {
      await insertOrders(app.t.db, [{ id: '9007199254740992' }, { id: '9007199254740993' }]);
      await app.client.delete('/v1/store/orders/9007199254740993').expect(204);
      expect(await statusOf(app.t.db, '9007199254740993')).toBe('cancelled');
      expect(await statusOf(app.t.db, '9007199254740992')).toBe('pending');
    });

    it('accepts the int64 extremes, a minus sign and leading zeros', async () => {
      await insertOrders(app.t.db, [
        { id: INT64_MAX },
        { id: INT64_MIN },
        { id: '-5' },
        { id: '7' },
      ]);
      await app.client.delete(`/v1/store/orders/${INT64_MAX}`).expect(204);
      await app.client.delete(`/v1/store/orders/${INT64_MIN}`).expect(204);
      await app.client.delete('/v1/store/orders/-5').expect(204);
      await app.client.delete('/v1/store/orders/0007').expect(204);
      await app.client.delete('/v1/store/orders/-0').expect(404);
      for (const id of [INT64_MAX, INT64_MIN, '-5', '7'])
        expect(await statusOf(app.t.db, id)).toBe('cancelled');
    });

    it.each([
      'abc',
      '1.5',
      '1e3',
      '+5',
      '0x10',
      '--1',
      '1-',
      '%201',
      '1%20',
      '9223372036854775808',
      '-9223372036854775809',
      '99999999999999999999999999',
      '١٢٣',
    ])('answers 400 INVALID_ORDER_ID for %p', async (id) => {
      const res = await app.client
        .delete(`/v1/store/orders/${encodeURI(id).replace(/%25/g, '%')}`)
        .expect(400);
      expectErrorBody(res, 400, 'INVALID_ORDER_ID');
    });
  });

  describe('races', () => {
    it('lets exactly one of 50 concurrent cancels change the row, and all of them answer 204', async () => {
      const [id] = await insertOrders(app.t.db, [{ status: 'pending' }]);
      const results = await Promise.all(
        Array.from({ length: 50 }, () => app.client.delete(`/v1/store/orders/${id}`)),
      );
      expect(results.map((r) => r.status)).toEqual(Array(50).fill(204));
      const { rows } = await app.t.db.query('SELECT status FROM orders WHERE id = $1', [id]);
      expect(rows).toEqual([{ status: 'cancelled' }]);
    });

    it('never answers 204 for a shipped order nor 409 for a cancelled one when a shipment races', async () => {
      const outcomes = { cancelled: 0, shipped: 0 };
      for (let round = 0; round < 30; round++) {
        const [id] = await insertOrders(app.t.db, [{ status: 'pending' }]);
        const [cancel] = await Promise.all([
          app.client.delete(`/v1/store/orders/${id}`),
          app.t.db.query(
            `UPDATE orders SET status = 'shipped' WHERE id = $1 AND status = 'pending'`,
            [id],
          ),
        ]);
        const final = await statusOf(app.t.db, id);
        if (cancel.status === 204) expect(final).toBe('cancelled');
        else {
          expect(cancel.status).toBe(409);
          expect(final).toBe('shipped');
        }
        outcomes[final as 'cancelled' | 'shipped']++;
      }
      expect(outcomes.cancelled + outcomes.shipped).toBe(30);
    });
  });

  describe('statements', () => {
    it('are sent by name through `configInheriting`, the values beside them, and stay as they were', async () => {
      const [id] = await insertOrders(app.t.db, [{ status: 'shipped' }]);
      const client = new Client({ connectionString: app.t.databaseUrl });
      await client.connect();
      const preparedByName = async (): Promise<number> =>
        (
          await client.query('SELECT 1 FROM pg_prepared_statements WHERE name = $1', [
            ORDER_STATUS.name,
          ])
        ).rowCount ?? 0;
      try {
        expect(await preparedByName()).toBe(0);
        const { rows } = await client.query(configInheriting(ORDER_STATUS), [id]);
        expect(rows).toEqual([{ status: 'shipped' }]);
        expect(await preparedByName()).toBe(1);
        expect((await client.query(configInheriting(ORDER_STATUS), [id])).rows).toEqual(rows);
      } finally {
        await client.end();
      }
      expect(Object.entries(ORDER_STATUS)).toEqual([
        ['name', ORDER_STATUS.name],
        ['text', ORDER_STATUS.text],
      ]);
    });
  });
});
