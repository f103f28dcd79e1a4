import request from 'supertest';
import { DataSource } from 'typeorm';
import { hashApiKey } from '../src/auth/api-key';
import { ApiKey } from '../src/auth/api-key.entity';
import { PLANS } from '../src/plans/plans';
import { api, expectErrorBody } from './support/client';
import { testAppPerSuite } from './support/suite-app';

const CHALLENGE = 'Bearer realm="store-orders"';
const INVALID_TOKEN = 'Bearer realm="store-orders", error="invalid_token"';

describe('authentication', () => {
  const app = testAppPerSuite();

  it.each(PLANS)('admits a valid %s key on every operation', async (plan) => {
    const { key } = await app.t.keys.issue({
      plan,
      limits: plan === 'enterprise' ? { perMinute: 100, perDay: 1000 } : undefined,
    });
    await api(app.t, key).get('/v1/store/orders').expect(200);
    const res = await api(app.t, key).delete('/v1/store/orders/123456').expect(404);
    expectErrorBody(res, 404, 'ORDER_NOT_FOUND');
  });

  it.each([
    ['GET', '/v1/store/orders'],
    ['DELETE', '/v1/store/orders/1'],
  ])('answers %s %s without a key 401 with the Bearer challenge', async (method, path) => {
    const res = await api(app.t, null)
      .send(method.toLowerCase() as 'get', path)
      .expect(401);
    expectErrorBody(res, 401, 'UNAUTHORIZED');
    expect(res.headers['www-authenticate']).toBe(CHALLENGE);
  });

  it('checks the key before anything else: an invalid id without a key is still 401', async () => {
    const res = await api(app.t, null).delete('/v1/store/orders/abc').expect(401);
    expectErrorBody(res, 401, 'UNAUTHORIZED');
  });

  it('answers an unknown key 401 with error="invalid_token"', async () => {
    const res = await api(app.t, 'sk_unknownunknownunknownunknownunknownunknown1')
      .get('/v1/store/orders')
      .expect(401);
    expectErrorBody(res, 401, 'UNAUTHORIZED');
    expect(res.headers['www-authenticate']).toBe(INVALID_TOKEN);
  });

  it('accepts the scheme name in any case', async () => {
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      await request(app.t.http)
        .get('/v1/store/orders')
        .set('Authorization', `${scheme} ${app.t.key}`)
        .expect(200);
    }
  });

  it.each([
    ['another scheme', () => 'Basic dXNlcjpwYXNz'],
    ['the scheme alone', () => 'Bearer'],
    ['the scheme and blanks', () => 'Bearer   '],
    ['two spaces before the key', (key: string) => `Bearer  ${key}`],
    ['two keys', (key: string) => `Bearer ${key} ${key}`],
    ['a trailing character', (key: string) => `Bearer ${key}!`],
    ['a 10 KB token', () => `Bearer sk_${'a'.repeat(10_240)}`],
  ])('refuses %s with 401 error="invalid_token"', async (_label, header) => {
    const res = await request(app.t.http)
      .get('/v1/store/orders')
      .set('Authorization', header(app.t.key))
      .expect(401);
    expectErrorBody(res, 401, 'UNAUTHORIZED');
    expect(res.headers['www-authenticate']).toBe(INVALID_TOKEN);
  });

  it("stops a revoked key within the key cache's 5 seconds", async () => {
    const issued = await app.t.keys.issue({ plan: 'pro' });
    await api(app.t, issued.key).get('/v1/store/orders').expect(200);
    await app.t.keys.revoke(issued.id);
    const revokedAt = Date.now();
    let status = 200;
    let lastAdmittedSentAt = 0;
    while (status === 200 && Date.now() - revokedAt < 15_000) {
      const sentAt = Date.now();
      status = (await api(app.t, issued.key).get('/v1/store/orders')).status;
      if (status === 200) {
        lastAdmittedSentAt = sentAt;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    expect(status).toBe(401);
    // Measured when each request was sent, so a slow answer on a loaded machine does not count.
    expect(lastAdmittedSentAt - revokedAt).toBeLessThan(5_000);
  });

  it('looks up keys asked for in the same turn with one query, each answered for its own hash', async () => {
    const store = app.t.keys;
    const issued = await Promise.all([0, 1, 2].map(() => store.issue({ plan: 'pro' })));
    const revoked = await store.issue({ plan: 'free' });
    await store.revoke(revoked.id);
    const repository = app.t.app.get(DataSource).getRepository(ApiKey);
    const find = jest.spyOn(repository, 'find');
    const touch = jest.spyOn(repository, 'update');
    try {
      const hashes = [...issued.map((k) => k.key), revoked.key, 'sk_unknown'].map(hashApiKey);
      const found = await Promise.all(hashes.map((h) => store.findActive(h)));
      expect(found.map((k) => k?.keyId ?? null)).toEqual([...issued.map((k) => k.id), null, null]);
      expect(found[1]).toMatchObject({ plan: 'pro', bannedUntil: null });
      expect(find).toHaveBeenCalledTimes(1);

      await Promise.all(issued.map((k) => store.touch(k.id)));
      expect(touch).toHaveBeenCalledTimes(1);
      const { rows } = await app.t.db.query<{ n: string }>(
        'SELECT count(*) AS n FROM api_keys WHERE id = ANY($1) AND last_used_at IS NOT NULL',
        [issued.map((k) => k.id)],
      );
      expect(rows[0].n).toBe('3');
    } finally {
      find.mockRestore();
      touch.mockRestore();
    }
  });

  it('stores only the SHA-256 of a key, never the key itself', async () => {
    const issued = await app.t.keys.issue({ plan: 'free', name: 'hash check' });
    const { rows } = await app.t.db.query<Record<string, unknown>>(
      'SELECT * FROM api_keys WHERE id = $1',
      [issued.id],
    );
    expect(JSON.stringify(rows[0])).not.toContain(issued.key);
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].prefix).toBe(issued.key.slice(0, 9));
  });

  it('lets the database refuse enterprise limits on other plans, and enterprise keys without them', async () => {
    await expect(
      app.t.db.query(
        `INSERT INTO api_keys (prefix, key_hash, plan, per_minute, per_day) VALUES ('sk_x', repeat('a', 64), 'pro', 5, 5)`,
      ),
    ).rejects.toThrow(/CHK_api_keys_enterprise_limits/);
    await expect(
      app.t.db.query(
        `INSERT INTO api_keys (prefix, key_hash, plan) VALUES ('sk_x', repeat('b', 64), 'enterprise')`,
      ),
    ).rejects.toThrow(/CHK_api_keys_enterprise_limits/);
  });
});
