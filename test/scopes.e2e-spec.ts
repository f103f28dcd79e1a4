import 'reflect-metadata';
import { Controller, Get, HttpCode, HttpStatus, Module } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { displayPrefix, generateApiKey, hashApiKey } from '../src/auth/api-key';
import type { IssueKeyRequest, KeySummary } from '../src/auth/api-keys.repository';
import { ApiKeyScopes1764200000000 } from '../src/auth/migrations/1764200000000-api-key-scopes';
import { KEYS_ADMIN, knownScopes, requiredScopeOf, RequireScope } from '../src/auth/scopes';
import { keyJson } from '../src/auth/key-json';
import { loadModuleDeclarations } from '../src/cli/module-declarations';
import { RouteTable } from '../src/common/http/route-table';
import { dataSourceOptions } from '../src/database/data-source-options';
import { ApiOperationResponses } from '../src/openapi/api-responses.decorator';
import { ApiTag } from '../src/openapi/api-tag.decorator';
import { OrderScopes } from '../src/orders/order.scopes';
import { api, expectErrorBody } from './support/client';
import { eventually } from './support/eventually';
import { insertOrders, statusOf } from './support/orders';
import { PostgresStatementCounter } from './support/postgres-statement-counter';
import { createTestApp, createTestDatabase, TestApp } from './support/test-app';
import { WidgetsModule } from './fixtures/widgets/widgets.module';

interface ScopedDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        description?: string;
        'x-required-scopes'?: string[];
        responses: Record<
          string,
          {
            headers: Record<string, { description: string }>;
            content: Record<string, { examples: Record<string, { value: unknown }> }>;
          }
        >;
      }
    >
  >;
}

/** The challenge of a 403 (RFC 6750 §3.1), naming the scope the key lacks. */
const challenge = (scope: string): string =>
  `Bearer realm="store-orders", error="insufficient_scope", scope="${scope}"`;

/** A route of the admin API's scope, the only one a key without scopes lacks (test only). */
@ApiTag({ name: 'scope-probe', description: 'A route that needs keys:admin (test only).' })
@Controller('scope-probe')
class AdminProbeController {
  @Get('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  @RequireScope(KEYS_ADMIN)
  @ApiOperation({ operationId: 'probeAdmin', summary: 'Answers a key that has keys:admin' })
  @ApiOperationResponses({ [HttpStatus.NO_CONTENT]: { description: 'The key has keys:admin.' } })
  admin(): void {
    return undefined;
  }
}

@Module({ controllers: [AdminProbeController] })
class AdminProbeModule {}

/** What a key is refused with when it lacks `scope`: 403, the body, the challenge, the headers. */
function expectInsufficientScope(
  res: { status: number; body: unknown; headers: Record<string, string> },
  scope: string,
): void {
  expect(res.status).toBe(403);
  expectErrorBody(res, 403, 'INSUFFICIENT_SCOPE');
  expect((res.body as { message: string }).message).toContain(scope);
  expect(res.headers['www-authenticate']).toBe(challenge(scope));
}

describe('scopes through HTTP', () => {
  let t: TestApp;
  let database: PostgresStatementCounter;
  const issue = async (request: Partial<IssueKeyRequest>): Promise<string> =>
    (await t.keys.issue({ plan: 'pro', ...request })).key;
  const pendingOrder = async (): Promise<string> => (await insertOrders(t.db, [{}]))[0];

  beforeAll(async () => {
    // Through a counter of the statements the app sends: the scope check must send none.
    database = await PostgresStatementCounter.start(await createTestDatabase());
    t = await createTestApp({
      databaseUrl: database.url,
      imports: [WidgetsModule, AdminProbeModule],
    });
  });
  afterAll(async () => {
    await t.close();
    await database.close();
  });

  it.each(['v1', 'v2'])(
    'lets a read-only key list orders (%s) but not cancel one: 403 INSUFFICIENT_SCOPE naming orders:cancel',
    async (version) => {
      const key = await issue({ scopes: [OrderScopes.READ] });
      const id = await pendingOrder();
      await api(t, key).get(`/${version}/store/orders`).expect(200);
      const res = await api(t, key).delete(`/${version}/store/orders/${id}`);
      expectInsufficientScope(res, 'orders:cancel');
      expect(await statusOf(t.db, id)).toBe('pending');
    },
  );

  it.each(['v1', 'v2'])(
    'lets a cancel-only key cancel (%s) but not list: 403 naming orders:read',
    async (version) => {
      const key = await issue({ scopes: [OrderScopes.CANCEL] });
      const id = await pendingOrder();
      expectInsufficientScope(await api(t, key).get(`/${version}/store/orders`), 'orders:read');
      await api(t, key).delete(`/${version}/store/orders/${id}`).expect(204);
      expect(await statusOf(t.db, id)).toBe('cancelled');
    },
  );

  it('counts a 403 against the key, with the rate-limit headers, and a full window is 429 first', async () => {
    const key = await issue({
      plan: 'enterprise',
      limits: { perMinute: 4, perDay: 1_000 },
      scopes: [OrderScopes.READ],
    });
    const id = await pendingOrder();
    const listed = await api(t, key).get('/v1/store/orders').expect(200);
    expect(listed.headers['x-ratelimit-limit']).toBe('4');
    expect(listed.headers['x-ratelimit-remaining']).toBe('3');
    const refused = await api(t, key).delete(`/v1/store/orders/${id}`).expect(403);
    expect(refused.headers['x-ratelimit-remaining']).toBe('2');
    const again = await api(t, key).delete(`/v2/store/orders/${id}`).expect(403);
    expect(again.headers['x-ratelimit-remaining']).toBe('1');
    await api(t, key).get('/v2/store/orders').expect(200);
    // The window is full: the limiter answers before the scope is looked at.
    const over = await api(t, key).delete(`/v1/store/orders/${id}`).expect(429);
    expectErrorBody(over, 429, 'RATE_LIMIT_EXCEEDED');
  });

  it('lets a key issued without scopes list, cancel and use a scope a module declares', async () => {
    const key = await issue({});
    const id = await pendingOrder();
    for (const version of ['v1', 'v2']) {
      await api(t, key).get(`/${version}/store/orders`).expect(200);
    }
    await api(t, key).delete(`/v2/store/orders/${id}`).expect(204);
    await api(t, key).delete('/v1/widgets/1').expect(204);
  });

  it('answers 401, not 403, to a missing or invalid key on a scoped route', async () => {
    const id = await pendingOrder();
    const missing = await api(t, null).delete(`/v1/store/orders/${id}`).expect(401);
    expectErrorBody(missing, 401, 'UNAUTHORIZED');
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="store-orders"');
    const invalid = await api(t, generateApiKey()).delete(`/v2/store/orders/${id}`).expect(401);
    expect(invalid.headers['www-authenticate']).toBe(
      'Bearer realm="store-orders", error="invalid_token"',
    );
    // A revoked restricted key is no key at all.
    const { id: keyId, key } = await t.keys.issue({ plan: 'free', scopes: [OrderScopes.READ] });
    await t.keys.revoke(keyId);
    await eventually(
      async () => (await api(t, key).delete(`/v1/store/orders/${id}`)).status,
      (status) => status === 401,
      10_000,
    );
  });

  it("serves a module's route that declares no scope to a restricted key, and refuses one that does", async () => {
    const key = await issue({ scopes: [OrderScopes.READ] });
    await api(t, key).get('/v1/widgets/1').expect(200);
    expectInsufficientScope(await api(t, key).delete('/v1/widgets/1'), 'widgets:write');
    const writer = await issue({ scopes: ['widgets:write'] });
    await api(t, writer).delete('/v1/widgets/1').expect(204);
    expectInsufficientScope(await api(t, writer).get('/v1/store/orders'), 'orders:read');
  });

  it('grants keys:admin only by name, never to a key without scopes', async () => {
    expectInsufficientScope(
      await api(t, await issue({})).get('/v1/scope-probe/admin'),
      'keys:admin',
    );
    expectInsufficientScope(
      await api(t, await issue({ scopes: ['*'] })).get('/v1/scope-probe/admin'),
      'keys:admin',
    );
    const admin = await issue({ scopes: [KEYS_ADMIN] });
    await api(t, admin).get('/v1/scope-probe/admin').expect(204);
    expectInsufficientScope(await api(t, admin).get('/v1/store/orders'), 'orders:read');
    const everything = await issue({ scopes: ['*', KEYS_ADMIN] });
    await api(t, everything).get('/v1/scope-probe/admin').expect(204);
    await api(t, everything).get('/v2/store/orders').expect(200);
  });

  it('refuses to issue a key with an unknown or malformed scope, naming it', async () => {
    for (const scope of ['orders:write', 'Orders:Read', 'orders']) {
      await expect(t.keys.issue({ plan: 'free', scopes: [scope] })).rejects.toThrow(scope);
    }
    await expect(t.keys.issue({ plan: 'free', scopes: [] })).rejects.toThrow(/at least one/);
  });

  it('keeps the scopes of a rotated key', async () => {
    const old = await t.keys.issue({ plan: 'pro', scopes: [OrderScopes.READ] });
    const { issued } = await t.keys.rotate(old.id, 60_000);
    expect(issued.scopes).toEqual(['orders:read']);
    await api(t, issued.key).get('/v2/store/orders').expect(200);
    expectInsufficientScope(
      await api(t, issued.key).delete(`/v2/store/orders/${await pendingOrder()}`),
      'orders:cancel',
    );
  });

  it('follows a change of scopes made in the database on a cached key (the key changes feed)', async () => {
    const { id: keyId, key } = await t.keys.issue({ plan: 'pro' });
    await api(t, key)
      .delete(`/v1/store/orders/${await pendingOrder()}`)
      .expect(204);
    await t.db.query(`UPDATE api_keys SET scopes = '{orders:read}' WHERE id = $1`, [keyId]);
    // Announced at once; within the 5 s of the key cache even without the feed. Each try on an
    // order of its own: one let in before the notification arrived cancels its order.
    let id = '';
    const res = await eventually(
      async () => {
        id = await pendingOrder();
        return await api(t, key).delete(`/v1/store/orders/${id}`);
      },
      (r) => r.status === 403,
      10_000,
    );
    expectInsufficientScope(res, 'orders:cancel');
    expect(await statusOf(t.db, id)).toBe('pending');
  });

  it('asks the database nothing for the scope check: the scopes are cached with the key', async () => {
    const key = await issue({ scopes: [OrderScopes.READ] });
    const id = await pendingOrder();
    // The key's one lookup: the only statement that reads the scopes column.
    await api(t, key).get('/v1/store/orders').expect(200);
    const lookups = (): number => database.countMatching(/^SELECT .*"scopes"/s);
    const before = lookups();
    expect(before).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 10; i++) {
      await api(t, key).get('/v1/store/orders').expect(200);
      await api(t, key).delete(`/v1/store/orders/${id}`).expect(403);
    }
    // None, or one if the key's cache entry lapsed meanwhile (5 s without the feed): never one
    // per request.
    expect(lookups() - before).toBeLessThanOrEqual(1);
  });

  it("states the scope of every scoped operation in its version's document, a module's too", async () => {
    const routes = t.app.get(RouteTable).routes;
    const scoped = routes.flatMap((route) => {
      const handler = (route.controller.prototype as Record<string, object>)[route.handler];
      const scope = requiredScopeOf(handler, route.controller);
      return scope === undefined ? [] : [{ route, scope }];
    });
    expect(
      scoped.map(({ route, scope }) => `${route.method} ${route.path} ${scope}`).sort(),
    ).toEqual(
      [
        'DELETE /v1/store/orders/:orderId orders:cancel',
        'DELETE /v1/widgets/:id widgets:write',
        'DELETE /v2/store/orders/:orderId orders:cancel',
        'GET /v1/scope-probe/admin keys:admin',
        'GET /v1/store/orders orders:read',
        'GET /v2/store/orders orders:read',
      ].sort(),
    );
    for (const { route, scope } of scoped) {
      const version = route.version as string;
      const document = (await request(t.http).get(`/openapi/v${version}.json`).expect(200))
        .body as ScopedDocument;
      const path = route.path.slice(`/v${version}`.length).replace(/:(\w+)/g, '{$1}');
      const operation = document.paths[path][route.method.toLowerCase()];
      expect(operation['x-required-scopes']).toEqual([scope]);
      expect(operation.description).toContain(`**Required scope:** \`${scope}\``);
      const forbidden = operation.responses['403'];
      expect(forbidden.headers['WWW-Authenticate'].description).toContain(challenge(scope));
      expect(forbidden.content['application/json'].examples.INSUFFICIENT_SCOPE.value).toEqual({
        code: 'INSUFFICIENT_SCOPE',
        message: expect.stringContaining(scope),
        status: 403,
      });
    }
    // A route that needs no scope states none.
    const v1 = (await request(t.http).get('/openapi/v1.json').expect(200)).body as ScopedDocument;
    expect(v1.paths['/widgets/{id}'].get['x-required-scopes']).toBeUndefined();
  });

  it('has every scope a route of the service needs declared where the keys tool finds it', () => {
    const files = loadModuleDeclarations().map((file) => file.replace(/\\/g, '/'));
    expect(files).toEqual(
      expect.arrayContaining([expect.stringMatching(/orders\/order\.scopes\.ts$/)]),
    );
    const declared = new Map(knownScopes().map(({ name, description }) => [name, description]));
    for (const scope of ['orders:read', 'orders:cancel', 'keys:admin', 'widgets:write']) {
      expect({ scope, description: declared.get(scope) }).toEqual({
        scope,
        description: expect.stringMatching(/\S/),
      });
    }
  });
});

describe('keys that existed before scopes', () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    // A database as it was before the scopes migration, with a key issued then; then migrated.
    const databaseUrl = await createTestDatabase();
    const ds = new DataSource({
      ...dataSourceOptions(databaseUrl, {
        connectTimeoutMs: 5000,
        statementTimeoutMs: 30000,
        poolSize: 1,
      }),
      entities: [],
      migrations: [],
    });
    await ds.initialize();
    const runner = ds.createQueryRunner();
    try {
      const migration = new ApiKeyScopes1764200000000();
      await migration.down(runner);
      key = generateApiKey();
      await runner.query(
        `INSERT INTO api_keys (name, prefix, key_hash, plan) VALUES ('before scopes', $1, $2, 'free')`,
        [displayPrefix(key), hashApiKey(key)],
      );
      await migration.up(runner);
      const rows = (await runner.query('SELECT scopes FROM api_keys WHERE key_hash = $1', [
        hashApiKey(key),
      ])) as { scopes: string[] | null }[];
      expect(rows).toEqual([{ scopes: null }]);
    } finally {
      await runner.release();
      await ds.destroy();
    }
    t = await createTestApp({ databaseUrl, imports: [AdminProbeModule] });
  });
  afterAll(() => t.close());

  it('keep full access to the API: they list and cancel, in v1 and v2', async () => {
    const [first, second] = await insertOrders(t.db, [{}, {}]);
    await api(t, key).get('/v1/store/orders').expect(200);
    await api(t, key).get('/v2/store/orders').expect(200);
    await api(t, key).delete(`/v1/store/orders/${first}`).expect(204);
    await api(t, key).delete(`/v2/store/orders/${second}`).expect(204);
  });

  it('but not the admin API', async () => {
    expectInsufficientScope(await api(t, key).get('/v1/scope-probe/admin'), 'keys:admin');
  });

  it('show their scopes as every scope (`["*"]`)', async () => {
    const listed = (await t.keys.list()).find((k) => k.name === 'before scopes');
    expect(listed).toBeDefined();
    expect(keyJson(listed as KeySummary).scopes).toEqual(['*']);
  });
});
