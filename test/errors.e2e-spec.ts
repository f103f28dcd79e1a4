import request from 'supertest';
import { api, expectErrorBody } from './support/client';
import { testAppPerSuite } from './support/suite-app';
import { createTestApp } from './support/test-app';

describe('error responses', () => {
  const app = testAppPerSuite();

  it.each(['/v1/store/nothing', '/v1/store/orders/1/items', '/nope', '/v3/store/orders'])(
    'answers an unknown path (%s) 404 NOT_FOUND',
    async (path) => {
      const res = await app.client.get(path).expect(404);
      expectErrorBody(res, 404, 'NOT_FOUND');
    },
  );

  it.each([
    ['post', '/v1/store/orders', 'GET, HEAD'],
    ['put', '/v1/store/orders', 'GET, HEAD'],
    ['delete', '/v1/store/orders', 'GET, HEAD'],
    ['get', '/v1/store/orders/1', 'DELETE'],
    ['patch', '/v1/store/orders/1', 'DELETE'],
  ] as const)(
    'answers %s %s 405 METHOD_NOT_ALLOWED with Allow: %s',
    async (method, path, allow) => {
      const res = await app.client.send(method, path).expect(405);
      expectErrorBody(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow).toBe(allow);
    },
  );

  it.each(['/openapi.json', '/openapi/v2.json', '/docs'])(
    'answers POST %s (a document or Swagger UI, mounted outside the controllers) 405 with Allow: GET, HEAD',
    async (path) => {
      const res = await request(app.t.http).post(path).expect(405);
      expectErrorBody(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow).toBe('GET, HEAD');
    },
  );

  it('answers HEAD on the list like GET, without a body', async () => {
    const res = await app.client.send('head', '/v1/store/orders').expect(200);
    expect(res.text).toBeUndefined();
  });

  it('answers a body over 16 KiB 413 PAYLOAD_TOO_LARGE, whatever its type', async () => {
    for (const type of ['application/json', 'text/plain', 'application/octet-stream']) {
      const res = await app.client
        .delete('/v1/store/orders/1')
        .set('Content-Type', type)
        .send('x'.repeat(16 * 1024 + 1))
        .expect(413);
      expectErrorBody(res, 413, 'PAYLOAD_TOO_LARGE');
    }
  });

  it('answers a chunked body over 16 KiB 413 too', async () => {
    const req = request(app.t.http)
      .delete('/v1/store/orders/1')
      .set('Authorization', `Bearer ${app.t.key}`)
      .set('Transfer-Encoding', 'chunked');
    for (let i = 0; i < 20; i++) void req.write('y'.repeat(1024));
    const res = await req.expect(413);
    expectErrorBody(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('ignores a small body on an operation that takes none', async () => {
    await app.client
      .delete('/v1/store/orders/987654')
      .send({ reason: 'changed my mind' })
      .expect(404);
  });

  it('answers a path with broken percent-encoding 400 BAD_REQUEST', async () => {
    const res = await app.client.delete('/v1/store/orders/%E0%A4%A').expect(400);
    expect(res.body.status).toBe(400);
    expect(['BAD_REQUEST', 'INVALID_ORDER_ID']).toContain(res.body.code);
  });

  it('answers an unexpected failure 500 INTERNAL_ERROR and leaks nothing about it', async () => {
    const broken = await createTestApp();
    try {
      await broken.db.query('ALTER TABLE orders RENAME TO orders_elsewhere');
      const res = await api(broken).get('/v1/store/orders').expect(500);
      expectErrorBody(res, 500, 'INTERNAL_ERROR');
      expect(res.text).not.toMatch(/orders_elsewhere|relation|SELECT|QueryFailedError|at \w+ \(/);
    } finally {
      await broken.close();
    }
  });
});
