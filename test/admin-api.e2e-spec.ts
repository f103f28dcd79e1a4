import request from 'supertest';
import { DataSource } from 'typeorm';
import { ADMIN_API } from '../src/admin/admin.errors';
import { ApiKeyAuthenticator } from '../src/auth/api-key.authenticator';
import { KeysService } from '../src/auth/keys.service';
import { registeredErrorCodes } from '../src/common/errors/error-code';
import { MetricsService } from '../src/metrics/metrics.service';
import { WidgetsModule } from './fixtures/widgets/widgets.module';
import { adminAppPerSuite, type AdminTestApp, startAdminApp } from './support/admin-app';
import { AppProcess } from './support/app-process';
import { buildOnce } from './support/build';
import { bearerFor } from './support/auth';
import { httpRequest } from './support/http';
import { expectErrorBody } from './support/client';
import { eventually } from './support/eventually';
import { describeWithBinary } from './support/system-binary';
import { twoInstancesPerSuite } from './support/suite-app';
import { createTestApp, createTestDatabase, type TestApp } from './support/test-app';

/** The built service (`npm run build`, once per run), as `npm start` runs it. */
const START_BUILT = ['node', 'dist/main.js'];

const BEARER = 'Bearer realm="store-orders"';

describe('admin API', () => {
  const a = adminAppPerSuite();
  let t: TestApp;

  beforeAll(() => {
    t = a.t;
  });

  /** A request to the admin listener, held to the admin document. */
  async function send(
    method: 'get' | 'post' | 'delete',
    path: string,
    body?: unknown,
    key?: string | null,
  ): Promise<request.Response> {
    const req = a.call(method, path, key);
    const res = body === undefined ? await req : await req.send(body as object);
    a.check(method, path, res);
    return res;
  }

  it('the main port never serves /admin: 404 NOT_FOUND', async () => {
    for (const path of ['/admin/v1/keys', '/admin/v1/audit', '/openapi/admin.json']) {
      const res = await request(t.http).get(path).set('Authorization', `Bearer ${a.adminKey}`);
      expect(res.status).toBe(404);
      if (path.startsWith('/admin')) expectErrorBody(res, 404, 'NOT_FOUND');
    }
    // Nor any other method on them: 404, never a 405 that would say the path exists.
    const count = async (): Promise<number> =>
      (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys')).rows[0].n;
    const before = await count();
    const post = await request(t.http)
      .post('/admin/v1/keys')
      .set('Authorization', `Bearer ${a.adminKey}`)
      .send({ plan: 'free' });
    expectErrorBody(post, 404, 'NOT_FOUND');
    expect(await count()).toBe(before);
  });

  it('a known admin path with another method is 405 with Allow; an unknown one 404', async () => {
    const put = await a
      .call('get', '/admin/v1/keys')
      .then(() => request(a.http).put('/admin/v1/keys'));
    expectErrorBody(put, 405, 'METHOD_NOT_ALLOWED');
    expect(put.headers.allow).toBe('GET, HEAD, POST');
    expectErrorBody(await request(a.http).get('/admin/v2/keys'), 404, 'NOT_FOUND');
    expectErrorBody(await request(a.http).get('/v1/store/orders'), 404, 'NOT_FOUND');
  });

  it('401 without a key, 403 with a key lacking keys:admin', async () => {
    const none = await send('get', '/admin/v1/keys', undefined, null);
    expectErrorBody(none, 401, 'UNAUTHORIZED');
    expect(none.headers['www-authenticate']).toBe(BEARER);
    const bad = await send('get', '/admin/v1/keys', undefined, 'sk_madeup');
    expect(bad.status).toBe(401);
    expect(bad.headers['www-authenticate']).toBe(`${BEARER}, error="invalid_token"`);
    // The test app's key has every scope but keys:admin.
    const weak = await send('get', '/admin/v1/keys', undefined, t.key);
    expectErrorBody(weak, 403, 'INSUFFICIENT_SCOPE');
    expect(weak.headers['www-authenticate']).toBe(
      `${BEARER}, error="insufficient_scope", scope="keys:admin"`,
    );
    expect(weak.headers['x-ratelimit-limit']).toBeDefined();
  });

  it("is rate limited by the admin key's plan", async () => {
    const free = await t.keys.issue({ plan: 'free', name: 'free admin', scopes: ['keys:admin'] });
    const res = await send('get', '/admin/v1/keys', undefined, free.key);
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBe('60');
    expect(res.headers['x-ratelimit-remaining']).toBe('59');
  });

  it('issues, lists, shows, rotates, unbans and revokes a key; the key works at once', async () => {
    const created = await send('post', '/admin/v1/keys', {
      plan: 'pro',
      name: 'reporting',
      scopes: ['orders:read'],
      expiresAt: '2099-01-01T00:00:00Z',
    });
    expect(created.status).toBe(201);
    const key = created.body as Record<string, unknown>;
    expect(key).toEqual({
      id: expect.any(String),
      key: expect.stringMatching(/^sk_/),
      name: 'reporting',
      plan: 'pro',
      perMinute: 300,
      perDay: 10_000,
      scopes: ['orders:read'],
      createdAt: expect.any(String),
      expiresAt: '2099-01-01T00:00:00.000Z',
    });
    const id = key.id as string;
    await request(t.http)
      .get('/v1/store/orders')
      .set('Authorization', `Bearer ${key.key as string}`)
      .expect(200);

    const list = await send('get', '/admin/v1/keys');
    expect(list.status).toBe(200);
    const ids = (list.body as { data: { id: string }[] }).data.map((k) => k.id);
    expect(ids).toContain(id);
    expect(JSON.stringify(list.body)).not.toMatch(/hash/i);

    const shown = await send('get', `/admin/v1/keys/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).not.toHaveProperty('key');
    expect(shown.body).toMatchObject({ id, plan: 'pro', scopes: ['orders:read'] });

    const rotated = await send('post', `/admin/v1/keys/${id}/rotate`, { graceSeconds: 0 });
    expect(rotated.status).toBe(201);
    const next = rotated.body as Record<string, unknown>;
    expect(next).toMatchObject({ key: expect.stringMatching(/^sk_/), scopes: ['orders:read'] });
    expect(next.id).not.toBe(id);

    expect((await send('post', `/admin/v1/keys/${next.id as string}/unban`)).status).toBe(204);
    expect((await send('delete', `/admin/v1/keys/${next.id as string}`)).status).toBe(204);
    expect((await send('delete', `/admin/v1/keys/${next.id as string}`)).status).toBe(204);
    await request(t.http)
      .get('/v1/store/orders')
      .set('Authorization', `Bearer ${next.key as string}`)
      .expect(401);
    // As the keys tool refuses it (exit code 2): a revoked key is never replaced.
    const again = await send('post', `/admin/v1/keys/${next.id as string}/rotate`, {});
    expectErrorBody(again, 409, 'KEY_REVOKED');
    expect((again.body as { message: string }).message).toBe(
      `Key ${next.id as string} is revoked: issue a new one (POST /admin/v1/keys)`,
    );
  });

  it("holds no database pool, key cache or feed of its own: the API application's serve both listeners", async () => {
    expect(a.admin.get(DataSource)).toBe(t.app.get(DataSource));
    expect(a.admin.get(ApiKeyAuthenticator)).toBe(t.app.get(ApiKeyAuthenticator));
    expect(a.admin.get(KeysService)).toBe(t.app.get(KeysService));
    // A key revoked over the admin API is refused by the API at once: one cache, not two.
    const created = await send('post', '/admin/v1/keys', { plan: 'free' });
    const { id, key } = created.body as { id: string; key: string };
    await request(t.http).get('/v1/store/orders').set('Authorization', `Bearer ${key}`).expect(200);
    expect((await send('delete', `/admin/v1/keys/${id}`)).status).toBe(204);
    await request(t.http).get('/v1/store/orders').set('Authorization', `Bearer ${key}`).expect(401);
  });

  it('a path id is a whole UUID, in either case: a prefix the keys tool would match is 404', async () => {
    const { body } = await send('post', '/admin/v1/keys', { plan: 'free', name: 'by id' });
    const id = (body as { id: string }).id;
    expect((await send('get', `/admin/v1/keys/${id.toUpperCase()}`)).body).toMatchObject({ id });
    for (const ref of [id.slice(0, 8), id.slice(0, 35), `${id}0`, ` ${id}`]) {
      const path = `/admin/v1/keys/${encodeURIComponent(ref)}`;
      expectErrorBody(await send('get', path), 404, 'KEY_NOT_FOUND');
      expectErrorBody(await send('post', `${path}/rotate`, {}), 404, 'KEY_NOT_FOUND');
      expectErrorBody(await send('post', `${path}/unban`), 404, 'KEY_NOT_FOUND');
      expectErrorBody(await send('delete', path), 404, 'KEY_NOT_FOUND');
    }
    // Nothing was changed through the prefix.
    expect((await send('get', `/admin/v1/keys/${id}`)).body).not.toHaveProperty('revokedAt');
  });

  it("counts an admin key's requests in the same windows on both listeners, and in the API's metrics", async () => {
    // 3 on the API and 4 on the admin listener spend a limit of 7, whichever listener comes next.
    const issued = await t.keys.issue({
      plan: 'enterprise',
      name: 'one budget',
      limits: { perMinute: 7, perDay: 1_000 },
      scopes: ['keys:admin', 'orders:read'],
    });
    for (let i = 0; i < 3; i++) {
      const res = await request(t.http)
        .get('/v1/store/orders')
        .set('Authorization', `Bearer ${issued.key}`);
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(6 - i));
    }
    for (let i = 0; i < 4; i++) {
      const res = await send('get', `/admin/v1/keys/${issued.id}`, undefined, issued.key);
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(3 - i));
    }
    expectErrorBody(
      await send('get', '/admin/v1/keys', undefined, issued.key),
      429,
      'RATE_LIMIT_EXCEEDED',
    );
    expectErrorBody(
      await request(t.http).get('/v1/store/orders').set('Authorization', `Bearer ${issued.key}`),
      429,
      'RATE_LIMIT_EXCEEDED',
    );
    // The service's one registry (its /metrics) has the admin requests, by route pattern.
    const metrics = t.app.get(MetricsService);
    await eventually(
      () => metrics.render(),
      (text) =>
        /^http_requests_total\{method="GET",route="\/admin\/v1\/keys\/:id",status="200"\} \d+$/m.test(
          text,
        ) &&
        /^http_requests_total\{method="GET",route="\/admin\/v1\/keys",status="429"\} \d+$/m.test(
          text,
        ),
      10_000,
    );
  });

  it('404 KEY_NOT_FOUND for an unknown id, on every route that takes one', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [method, path] of [
      ['get', `/admin/v1/keys/${unknown}`],
      ['get', '/admin/v1/keys/nope'],
      ['post', `/admin/v1/keys/${unknown}/rotate`],
      ['post', `/admin/v1/keys/${unknown}/unban`],
      ['delete', `/admin/v1/keys/${unknown}`],
    ] as const) {
      expectErrorBody(await send(method, path), 404, 'KEY_NOT_FOUND');
    }
  });

  it.each([
    ['not JSON', 'plan=pro', 'text/plain', /JSON/],
    ['broken JSON', '{"plan":', 'application/json', /JSON/],
    ['not an object', '["pro"]', 'application/json', /object/],
    ['an unknown field', '{"plan":"pro","colour":"red"}', 'application/json', /colour/],
    ['a missing plan', '{"name":"x"}', 'application/json', /plan/],
    ['an unknown plan', '{"plan":"gold"}', 'application/json', /plan/],
    [
      'enterprise without limits',
      '{"plan":"enterprise","perMinute":5}',
      'application/json',
      /perDay/,
    ],
    [
      'limits on a fixed plan',
      '{"plan":"pro","perMinute":5,"perDay":9}',
      'application/json',
      /perMinute/,
    ],
    [
      'a limit of the wrong type',
      '{"plan":"enterprise","perMinute":"5","perDay":9}',
      'application/json',
      /perMinute/,
    ],
    ['a name of the wrong type', '{"plan":"pro","name":7}', 'application/json', /name/],
    [
      'an unknown scope',
      '{"plan":"pro","scopes":["orders:write"]}',
      'application/json',
      /scopes.*orders:write/,
    ],
    ['scopes not an array', '{"plan":"pro","scopes":"orders:read"}', 'application/json', /scopes/],
    [
      'an expiry that is no time',
      '{"plan":"pro","expiresAt":"tomorrow"}',
      'application/json',
      /expiresAt/,
    ],
    [
      'an expiry in the past',
      '{"plan":"pro","expiresAt":"2001-01-01T00:00:00Z"}',
      'application/json',
      /expiresAt/,
    ],
  ])(
    'POST /admin/v1/keys with %s: 400 INVALID_BODY naming it',
    async (_what, body, type, named) => {
      const res = await a.call('post', '/admin/v1/keys').set('Content-Type', type).send(body);
      a.check('post', '/admin/v1/keys', res);
      expectErrorBody(res, 400, 'INVALID_BODY');
      expect((res.body as { message: string }).message).toMatch(named);
    },
  );

  /** `depth` arrays around `leaf`, as JSON text. */
  const nested = (depth: number, leaf = '"orders:read"'): string =>
    `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

  it.each([
    [
      'a NUL in name',
      '{"plan":"pro","name":"a\\u0000b"}',
      /^name must not contain control characters/,
    ],
    ['a terminal escape in name', '{"plan":"pro","name":"a\\u001b]0;x\\u0007"}', /^name must not/],
    ['a DEL in name', '{"plan":"pro","name":"a\\u007fb"}', /^name must not/],
    ['a C1 control in name', '{"plan":"pro","name":"a\\u009bb"}', /^name must not/],
    ['a NUL in a scope', '{"plan":"pro","scopes":["orders:read\\u0000"]}', /^scopes\.0 must not/],
    [
      'a newline in expiresAt',
      '{"plan":"pro","expiresAt":"2099-01-01T00:00:00Z\\n"}',
      /^expiresAt must not/,
    ],
    [
      'a 7,000-deep array in scopes',
      `{"plan":"pro","scopes":${nested(7000)}}`,
      /^scopes\.0 must not be an array/,
    ],
    [
      'an array in a scope',
      '{"plan":"pro","scopes":[["orders:read"]]}',
      /^scopes\.0 must not be an array/,
    ],
    [
      'an object for scopes',
      '{"plan":"pro","scopes":{"0":"orders:read"}}',
      /^scopes must not be an object/,
    ],
    ['a deep array in name', `{"plan":"pro","name":${nested(5000)}}`, /^name must not be an array/],
    [
      'an object in perMinute',
      '{"plan":"enterprise","perMinute":{"a":{}},"perDay":9}',
      /^perMinute must not be an object/,
    ],
    [
      'a deep array in an unknown field',
      `{"plan":"pro","colour":${nested(7000)}}`,
      /^colour: property colour should not exist$/,
    ],
    [
      '__proto__',
      '{"plan":"pro","__proto__":{"plan":"enterprise"}}',
      /^__proto__: property __proto__ should not exist$/,
    ],
    [
      'constructor',
      '{"plan":"pro","constructor":{"name":"x"}}',
      /^constructor: property constructor should not exist$/,
    ],
    [
      'prototype',
      '{"plan":"pro","prototype":1}',
      /^prototype: property prototype should not exist$/,
    ],
  ])(
    'POST /admin/v1/keys with %s: 400 INVALID_BODY naming the field, no key issued',
    async (_what, body, named) => {
      const count = async (): Promise<number> =>
        (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys')).rows[0].n;
      const before = await count();
      const res = await a
        .call('post', '/admin/v1/keys')
        .set('Content-Type', 'application/json')
        .send(body);
      a.check('post', '/admin/v1/keys', res);
      expectErrorBody(res, 400, 'INVALID_BODY');
      const { message } = res.body as { message: string };
      expect(message).toMatch(named);
      // The offending text is never echoed back.
      expect(message).not.toMatch(/\p{Cc}/u);
      expect(await count()).toBe(before);
    },
  );

  it('rotate refuses __proto__, constructor, prototype and nesting deeper than its schema, naming the field', async () => {
    const { body } = await send('post', '/admin/v1/keys', { plan: 'free' });
    const id = (body as { id: string }).id;
    for (const [sent, named] of [
      ['{"__proto__":{"graceSeconds":0}}', /^__proto__: property __proto__ should not exist$/],
      ['{"constructor":1}', /^constructor: property constructor should not exist$/],
      ['{"prototype":{}}', /^prototype: property prototype should not exist$/],
      [`{"graceSeconds":${nested(7000, '0')}}`, /^graceSeconds must not be an array/],
      ['{"graceSeconds":{"a":0}}', /^graceSeconds must not be an object/],
    ] as const) {
      const res = await a
        .call('post', `/admin/v1/keys/${id}/rotate`)
        .set('Content-Type', 'application/json')
        .send(sent);
      a.check('post', `/admin/v1/keys/${id}/rotate`, res);
      expectErrorBody(res, 400, 'INVALID_BODY');
      expect((res.body as { message: string }).message).toMatch(named);
    }
    // Nothing was rotated: a rotation gives the old key an expiry.
    expect((await send('get', `/admin/v1/keys/${id}`)).body).not.toHaveProperty('expiresAt');
  });

  it('rotate refuses a grace period of the wrong type or an unknown field; bodies up to 16 KiB are read, past that 413', async () => {
    const { body } = await send('post', '/admin/v1/keys', { plan: 'free' });
    const id = (body as { id: string }).id;
    const wrong = await send('post', `/admin/v1/keys/${id}/rotate`, { graceSeconds: -1 });
    expectErrorBody(wrong, 400, 'INVALID_BODY');
    expect((wrong.body as { message: string }).message).toMatch(/graceSeconds/);
    const unknown = await send('post', `/admin/v1/keys/${id}/rotate`, { grace: 60 });
    expectErrorBody(unknown, 400, 'INVALID_BODY');
    expect((unknown.body as { message: string }).message).toMatch(/grace\b/);
    const zero = await send('post', '/admin/v1/keys', {
      plan: 'enterprise',
      perMinute: 0,
      perDay: 10,
    });
    expectErrorBody(zero, 400, 'INVALID_BODY');
    expect((zero.body as { message: string }).message).toMatch(/perMinute/);

    // Exactly 16 KiB is read (and its over-long name refused); one byte more is 413.
    const sized = (bytes: number): string => {
      const shell = JSON.stringify({ plan: 'free', name: '' });
      return JSON.stringify({ plan: 'free', name: 'x'.repeat(bytes - shell.length) });
    };
    expect(Buffer.byteLength(sized(16 * 1024))).toBe(16 * 1024);
    for (const [bytes, status, code] of [
      [16 * 1024, 400, 'INVALID_BODY'],
      [16 * 1024 + 1, 413, 'PAYLOAD_TOO_LARGE'],
    ] as const) {
      const res = await a
        .call('post', '/admin/v1/keys')
        .set('Content-Type', 'application/json')
        .send(sized(bytes));
      a.check('post', '/admin/v1/keys', res);
      expectErrorBody(res, status, code);
    }
  });

  it('rotation with graceSeconds 0 refuses the old key; unban lifts a ban the key is under', async () => {
    const created = await send('post', '/admin/v1/keys', { plan: 'pro', name: 'banned' });
    const old = created.body as { id: string; key: string };
    await t.db.query(`UPDATE api_keys SET banned_until = now() + interval '1 hour' WHERE id = $1`, [
      old.id,
    ]);
    const banned = await send('get', `/admin/v1/keys/${old.id}`);
    expect(banned.body).toHaveProperty('bannedUntil');
    const api = (key: string) =>
      request(t.http).get('/v1/store/orders').set('Authorization', `Bearer ${key}`);
    await eventually(
      async () => (await api(old.key)).status,
      (status) => status === 429,
      10_000,
    );

    // Unban takes no body: a field is refused (and the ban stays), an empty object is none.
    const withField = await send('post', `/admin/v1/keys/${old.id}/unban`, { force: true });
    expectErrorBody(withField, 400, 'INVALID_BODY');
    expect((withField.body as { message: string }).message).toMatch(/force/);
    expect((await send('get', `/admin/v1/keys/${old.id}`)).body).toHaveProperty('bannedUntil');
    expect((await send('post', `/admin/v1/keys/${old.id}/unban`, {})).status).toBe(204);
    expect((await send('get', `/admin/v1/keys/${old.id}`)).body).not.toHaveProperty('bannedUntil');
    await eventually(
      async () => (await api(old.key)).status,
      (status) => status === 200,
      10_000,
    );
    const unbanned = await send(
      'get',
      `/admin/v1/audit?target=${encodeURIComponent(`key:${old.id}`)}&action=key.unbanned`,
    );
    expect((unbanned.body as { data: unknown[] }).data).toHaveLength(1);

    const rotated = await send('post', `/admin/v1/keys/${old.id}/rotate`, { graceSeconds: 0 });
    expect(rotated.status).toBe(201);
    const next = rotated.body as { key: string };
    await eventually(
      async () => (await api(old.key)).status,
      (status) => status === 401,
      10_000,
    );
    expect((await api(next.key)).status).toBe(200);
  });

  it('writes audit events with actor key:<admin key id> and the request id; pages and filters them', async () => {
    const requestId = 'admin-audit-e2e-1';
    const created = await a
      .call('post', '/admin/v1/keys')
      .set('X-Request-Id', requestId)
      .send({ plan: 'free', name: 'audited' });
    expect(created.status).toBe(201);
    const target = `key:${(created.body as { id: string }).id}`;
    const page = await send('get', `/admin/v1/audit?target=${encodeURIComponent(target)}`);
    expect(page.status).toBe(200);
    expect(page.body).toEqual({
      data: [
        {
          id: expect.any(String),
          at: expect.any(String),
          actor: `key:${a.adminKeyId}`,
          action: 'key.created',
          target,
          requestId,
        },
      ],
      hasMore: false,
    });

    // Newest first, one at a time, by the admin key's actor.
    const actor = encodeURIComponent(`key:${a.adminKeyId}`);
    const first = await send('get', `/admin/v1/audit?actor=${actor}&action=key.created&limit=1`);
    const one = first.body as { data: { id: string }[]; hasMore: boolean; nextCursor: string };
    expect(one.data).toHaveLength(1);
    expect(one.data[0].id).toBe((page.body as { data: { id: string }[] }).data[0].id);
    expect(one.hasMore).toBe(true);
    const second = await send(
      'get',
      `/admin/v1/audit?actor=${actor}&action=key.created&limit=1&cursor=${encodeURIComponent(one.nextCursor)}`,
    );
    const two = second.body as { data: { id: string }[] };
    expect(BigInt(two.data[0].id)).toBeLessThan(BigInt(one.data[0].id));

    for (const query of [
      'limit=0',
      'action=key.eaten',
      'cursor=zzz',
      'colour=red',
      'limit=1&limit=2',
    ]) {
      expectErrorBody(await send('get', `/admin/v1/audit?${query}`), 400, 'INVALID_QUERY');
    }
  });

  it('serves its document and Swagger UI on the admin listener only', async () => {
    const doc = await request(a.http).get('/openapi/admin.json').expect(200);
    const paths = Object.keys((doc.body as { paths: object }).paths).sort();
    expect(paths).toEqual([
      '/admin/v1/audit',
      '/admin/v1/keys',
      '/admin/v1/keys/{id}',
      '/admin/v1/keys/{id}/rotate',
      '/admin/v1/keys/{id}/unban',
      '/admin/v1/webhooks',
      '/admin/v1/webhooks/{id}',
      '/admin/v1/webhooks/{id}/deliveries',
      '/admin/v1/webhooks/{id}/deliveries/{deliveryId}/retry',
      '/admin/v1/webhooks/{id}/rotate-secret',
      '/admin/v1/webhooks/{id}/test',
    ]);
    const ui = await request(a.http).get('/docs').redirects(1);
    expect(ui.status).toBe(200);
    expect(ui.text).toMatch(/swagger/i);
    const main = await request(t.http).get('/openapi.json').expect(200);
    expect(JSON.stringify(main.body)).not.toContain('/admin/');
  });

  it("lists its own codes in its document only: the API's documents (v1, v2, a module's) name none", async () => {
    const adminOnly = [
      'DELIVERY_NOT_FOUND',
      'INVALID_BODY',
      'KEY_NOT_FOUND',
      'KEY_REVOKED',
      'WEBHOOK_NOT_FOUND',
    ];
    const doc = await request(a.http).get('/openapi/admin.json').expect(200);
    const listed = (doc.body as { components: { schemas: { Error: object } } }).components.schemas
      .Error as { properties: { code: { description: string } } };
    const codes = listed.properties.code.description.replace(/^.*: /, '').split(', ');
    expect(codes).toEqual(
      expect.arrayContaining([
        ...adminOnly,
        ...['INVALID_QUERY', 'UNAUTHORIZED', 'INSUFFICIENT_SCOPE', 'RATE_LIMIT_EXCEEDED'],
        ...['NOT_FOUND', 'METHOD_NOT_ALLOWED', 'PAYLOAD_TOO_LARGE', 'INTERNAL_ERROR'],
      ]),
    );
    // Nor does it list what only the orders' routes answer.
    for (const code of ['ORDER_NOT_FOUND', 'INVALID_ORDER_ID', 'INVALID_CURSOR', 'GONE']) {
      expect(codes).not.toContain(code);
    }

    // With a module's own version document (v3) beside v1 and v2.
    const withModule = await createTestApp({ imports: [WidgetsModule] });
    try {
      for (const path of [
        '/openapi.json',
        '/openapi/v1.json',
        '/openapi/v2.json',
        '/openapi/v3.json',
      ]) {
        const text = (await request(withModule.http).get(path).expect(200)).text;
        expect(text).toContain('Machine-readable error code: BAD_REQUEST');
        for (const code of adminOnly)
          expect({ path, has: text.includes(code) }).toEqual({ path, has: false });
      }
    } finally {
      await withModule.close();
    }
    // The registry says the same: these are the admin API's, and not the API's.
    const mainCodes = new Set(registeredErrorCodes().map((e) => e.code));
    const adminCodes = registeredErrorCodes(ADMIN_API).map((e) => e.code);
    expect(adminCodes.filter((code) => !mainCodes.has(code)).sort()).toEqual(adminOnly);
  });
});

describeWithBinary('redis-server', 'redis-server')(
  'admin API with two instances sharing PostgreSQL and Redis',
  () => {
    const instances = twoInstancesPerSuite({ redis: true });

    // Nested, so that its afterAll closes the admin application before the instances' closes
    // the application (and Redis client) it borrows from.
    describe("with A's admin listener", () => {
      let one: TestApp;
      let two: TestApp;
      let a: AdminTestApp;

      beforeAll(async () => {
        ({ a: one, b: two } = instances);
        a = await startAdminApp(one);
      });
      afterAll(() => a.admin.close());

      const orders = (t: TestApp, key: string) =>
        request(t.http).get('/v1/store/orders').set('Authorization', `Bearer ${key}`);

      it("a key created over A's admin API works on B at once; revoked there, B refuses it within 10 s", async () => {
        const created = await a.call('post', '/admin/v1/keys').send({ plan: 'free' });
        a.check('post', '/admin/v1/keys', created);
        expect(created.status).toBe(201);
        const { id, key } = created.body as { id: string; key: string };
        // B has never seen it: its first request is admitted.
        expect((await orders(two, key)).status).toBe(200);
        expect((await orders(one, key)).status).toBe(200);
        const revoked = await a.call('delete', `/admin/v1/keys/${id}`);
        a.check('delete', `/admin/v1/keys/${id}`, revoked);
        expect(revoked.status).toBe(204);
        // The revocation's bound (docs/keys.md), from its answer.
        for (const t of [two, one]) {
          await eventually(
            async () => (await orders(t, key)).status,
            (s) => s === 401,
            10_000,
          );
        }
      });

      it("an admin key's requests on A's admin listener and B's API spend one limit, in Redis", async () => {
        const created = await a.call('post', '/admin/v1/keys').send({
          plan: 'enterprise',
          perMinute: 6,
          perDay: 1_000,
          scopes: ['keys:admin', 'orders:read'],
        });
        expect(created.status).toBe(201);
        const { id, key } = created.body as { id: string; key: string };
        const statuses: number[] = [];
        for (let i = 0; i < 9; i++) {
          const res =
            i % 2 === 0 ? await a.call('get', `/admin/v1/keys/${id}`, key) : await orders(two, key);
          statuses.push(res.status);
          if (res.status === 200) expect(res.headers['x-ratelimit-remaining']).toBe(String(5 - i));
        }
        expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429]);
      });
    });
  },
);

describe('the service process (main.ts)', () => {
  let databaseUrl: string;
  let app: AppProcess | undefined;

  beforeAll(async () => {
    await buildOnce();
    databaseUrl = await createTestDatabase();
  }, 300_000);
  afterEach(async () => {
    await app?.stop();
    app = undefined;
  });

  it('has no admin listener unless ADMIN_PORT is set; its port answers /admin 404', async () => {
    const started = await AppProcess.start(START_BUILT, {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'info',
    });
    app = started.app;
    const { Authorization } = await bearerFor(databaseUrl);
    const res = await httpRequest(`${started.url}/admin/v1/keys`, { headers: { Authorization } });
    expect(res.status).toBe(404);
    expect(app.find(/Admin API/)).toBeUndefined();
  });

  it('with ADMIN_PORT, serves the admin API on ADMIN_HOST (loopback by default) and closes it on SIGTERM', async () => {
    const started = await AppProcess.start(START_BUILT, {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'info',
      ADMIN_PORT: '0',
    });
    app = started.app;
    await app.waitFor(/Admin API listening on/);
    const line = app.json().find((l) => /Admin API listening on/.test(String(l.msg)));
    expect(line).toMatchObject({ address: '127.0.0.1', port: expect.any(Number) });
    const adminUrl = `http://127.0.0.1:${String(line?.port)}`;
    const none = await httpRequest(`${adminUrl}/admin/v1/keys`);
    expect(none.status).toBe(401);
    expect((await httpRequest(`${adminUrl}/openapi/admin.json`)).status).toBe(200);
    expect((await httpRequest(`${started.url}/admin/v1/keys`)).status).toBe(404);
    app.kill('SIGTERM');
    expect(await app.exited).toMatchObject({ code: 0 });
  });

  it('refuses to start with an ADMIN_PORT that is no port, naming it', async () => {
    const started = AppProcess.start(START_BUILT, {
      DATABASE_URL: databaseUrl,
      ADMIN_PORT: 'eighty',
    });
    await expect(started).rejects.toThrow(/ADMIN_PORT must be an integer/);
  });
});
