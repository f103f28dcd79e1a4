import { Controller, Get, Module } from '@nestjs/common';
import request from 'supertest';
import { API_VERSIONING } from '../src/common/http/versioning';
import { RequireScope } from '../src/auth/scopes';
import { RouteTable } from '../src/common/http/route-table';
import { api, expectErrorBody, expectRateLimitHeaders } from './support/client';
import {
  expectEveryVersionedRouteDocumented,
  servedVersionDocuments,
} from './support/documented-routes';
import { createTestApp, TestApp } from './support/test-app';
import { WidgetsModule } from './fixtures/widgets/widgets.module';
import { WidgetRestock } from './fixtures/widgets/widget-restock.consumer';
import { eventually } from './support/eventually';
import { insertOrders } from './support/orders';

interface Operation {
  operationId: string;
  tags: string[];
  responses: Record<string, { content?: Record<string, { examples?: Record<string, object> }> }>;
}
interface Document {
  info: { description: string };
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: { Error: { properties: { code: { description: string } } } } };
}

/**
 * docs/extending.md, through HTTP: a module written the usual Nest way (test/fixtures/widgets, one
 * folder, nothing in src/ edited for it), mounted beside the real ones.
 */
describe('a module added by another team (the widgets fixture)', () => {
  let t: TestApp;
  let doc: Document;

  beforeAll(async () => {
    t = await createTestApp({ imports: [WidgetsModule] });
    doc = (await request(t.http).get('/openapi.json').expect(200)).body as Document;
  });
  afterAll(() => t.close());

  it('serves its controller, which names no version, under the default version', async () => {
    expect(API_VERSIONING.defaultVersion).toBe('1');
    const res = await api(t).get('/v1/widgets/1').expect(200);
    expect(res.body).toEqual({ id: 1, name: 'sprocket' });
  });

  it('requires a key and rate limits like the orders routes', async () => {
    const anonymous = await api(t, null).get('/v1/widgets/1').expect(401);
    expectErrorBody(anonymous, 401, 'UNAUTHORIZED');
    expect(anonymous.headers['www-authenticate']).toBe('Bearer realm="store-orders"');
    const first = await api(t).get('/v1/widgets/1').expect(200);
    const second = await api(t).get('/v1/widgets/1').expect(200);
    expectRateLimitHeaders(first);
    expect(Number(second.headers['x-ratelimit-remaining'])).toBeLessThan(
      Number(first.headers['x-ratelimit-remaining']),
    );
  });

  it.each([
    ['missing', 404, 'NOT_FOUND', 'No widget missing'],
    ['mine', 403, 'FORBIDDEN', 'Forbidden'],
    ['taken', 409, 'CONFLICT', 'Widget 7 is taken'],
    ['nameless', 422, 'UNPROCESSABLE_ENTITY', 'A widget needs a name'],
    ['teapot', 418, 'I_AM_A_TEAPOT', 'Short and stout'],
    ['jammed', 423, 'WIDGET_JAMMED', 'The widget is jammed; free it before using it'],
  ])('answers GET /v1/widgets/%s %d %s with its message', async (id, status, code, message) => {
    const res = await api(t).get(`/v1/widgets/${id}`).expect(status);
    expect(res.body).toEqual({ code, message, status });
    expectRateLimitHeaders(res);
  });

  it.each([
    ['crashed', 500, 'INTERNAL_ERROR', /hunter2|db\.internal/],
    ['upstream', 502, 'BAD_GATEWAY', /10\.0\.0\.7/],
  ])('answers GET /v1/widgets/%s %d %s, replacing the message', async (id, status, code, leak) => {
    const res = await api(t).get(`/v1/widgets/${id}`).expect(status);
    expect(res.body).toEqual({ code, message: 'An unexpected error occurred', status });
    expect(res.text).not.toMatch(leak);
  });

  it("answers a stock pipe's 400 with its message", async () => {
    const res = await api(t).delete('/v1/widgets/abc').expect(400);
    expectErrorBody(res, 400, 'BAD_REQUEST');
    expect(res.body.message).toMatch(/numeric string is expected/);
  });

  it('answers 405 with Allow on its paths, and 404 beside them', async () => {
    const res = await api(t).send('put', '/v1/widgets/1').expect(405);
    expectErrorBody(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('DELETE, GET, HEAD');
    expectRateLimitHeaders(res);
    expectErrorBody(await api(t).get('/v1/widgets/1/parts').expect(404), 404, 'NOT_FOUND');
  });

  it('keeps the orders API as it was beside it', async () => {
    const res = await api(t).send('post', '/v1/store/orders').expect(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    await api(t).delete('/v1/store/orders/424242').expect(404);
  });

  it('is in the v1 document: its operations, its tag, its error code', () => {
    const get = doc.paths['/widgets/{id}'].get;
    expect(get.operationId).toBe('getWidget');
    expect(get.tags).toEqual(['widgets']);
    expect(doc.paths['/widgets/{id}'].delete.operationId).toBe('deleteWidget');
    expect(doc.tags).toContainEqual({
      name: 'widgets',
      description: 'Widgets: a module added by another team (test only).',
    });
    expect(doc.tags.map((tag) => tag.name)).toContain('orders');
    expect(get.responses['423'].content?.['application/json'].examples?.WIDGET_JAMMED).toEqual(
      expect.objectContaining({
        value: { code: 'WIDGET_JAMMED', message: expect.any(String), status: 423 },
      }),
    );
    expect(doc.components.schemas.Error.properties.code.description).toContain('WIDGET_JAMMED');
    expect(doc.info.description).toContain('`WIDGET_JAMMED` (423)');
  });

  it('documents every route it serves under a version', async () => {
    const routes = t.app.get(RouteTable).routes;
    expect(routes.filter((route) => route.path.startsWith('/v1/widgets'))).toHaveLength(2);
    expectEveryVersionedRouteDocumented(routes, await servedVersionDocuments(t.http, routes));
  });

  it("reacts to another module's events from its folder: an order cancelled reaches its consumer", async () => {
    const [orderId] = await insertOrders(t.db, [{ petId: '7' }]);
    await api(t).delete(`/v1/store/orders/${orderId}`).expect(204);
    const restocked = await eventually(
      () => Promise.resolve([...t.app.get(WidgetRestock).restocked.values()]),
      (targets) => targets.includes(`order:${orderId}`),
      10_000,
    );
    expect(restocked.filter((target) => target === `order:${orderId}`)).toHaveLength(1);
  });
});

@Controller({ path: 'gadgets', version: '9' })
class GadgetsController {
  @Get()
  list(): string[] {
    return [];
  }
}

@Module({ controllers: [GadgetsController] })
class GadgetsModule {}

describe('a module served under a version no document describes', () => {
  it('stops the application at start instead of serving it undocumented', async () => {
    await expect(createTestApp({ imports: [GadgetsModule] })).rejects.toThrow(
      /served under \/v9 but no controller declares the v9 document/,
    );
  });
});

@Controller('sprockets')
class SprocketsController {
  @Get()
  @RequireScope('sprockets:whirl')
  list(): string[] {
    return [];
  }
}

@Module({ controllers: [SprocketsController] })
class SprocketsModule {}

describe('a module whose route requires a scope no module declares', () => {
  it('stops the application at start, naming the scope and the route', async () => {
    await expect(createTestApp({ imports: [SprocketsModule] })).rejects.toThrow(
      'Route GET /v1/sprockets requires scope "sprockets:whirl", which no module declares',
    );
  });
});
