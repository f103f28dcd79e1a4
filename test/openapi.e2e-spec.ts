import { ExpressAdapter } from '@nestjs/platform-express';
import request from 'supertest';
import { RouteTable } from '../src/common/http/route-table';
import { api } from './support/client';
import { OpenApiContract } from './support/contract';
import { expectOrderScopesDocumented, expectRedoclyClean } from './support/openapi-tools';
import {
  expectEveryVersionedRouteDocumented,
  servedVersionDocuments,
} from './support/documented-routes';
import { createTestApp, TestApp } from './support/test-app';

interface Document {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: { url: string }[];
  tags?: { name: string; description?: string }[];
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { required?: string[]; properties: Record<string, object> }>;
    securitySchemes: Record<string, object>;
  };
}

interface Operation {
  operationId: string;
  tags: string[];
  parameters?: { name: string; in: string; required: boolean; schema: object }[];
  responses: Record<
    string,
    { headers?: Record<string, object>; content?: Record<string, { schema: object }> }
  >;
}

describe('the OpenAPI document', () => {
  let t: TestApp;
  let doc: Document;
  /** `GET /v1/store/orders` …: each route given to the HTTP adapter while the app assembled. */
  const registered: string[] = [];

  beforeAll(async () => {
    const methods = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;
    const spies = methods.map((method) => jest.spyOn(ExpressAdapter.prototype, method));
    try {
      t = await createTestApp();
    } finally {
      spies.forEach((spy, i) => {
        for (const [path] of spy.mock.calls) {
          if (typeof path === 'string') registered.push(`${methods[i].toUpperCase()} ${path}`);
        }
        spy.mockRestore();
      });
    }
    doc = (await request(t.http).get('/openapi.json').expect(200)).body as Document;
  });
  afterAll(() => t.close());

  it('serves valid OpenAPI documents, v1 and v2', async () => {
    await expect(OpenApiContract.load(t.http, { validateDocuments: true })).resolves.toBeDefined();
  });

  it('is OpenAPI 3 titled "Petstore API", version 1.0.0, with the orders tag', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.title).toBe('Petstore API');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.info.description).toContain('| pro | 300 | 10,000 |');
    expect(doc.tags).toContainEqual({
      name: 'orders',
      description: "Place and manage customer orders: list the store's orders, cancel one.",
    });
  });

  it('has the paths relative to servers ending in /v1, with the operation ids', () => {
    expect(doc.paths['/store/orders'].get.operationId).toBe('listOrders');
    expect(doc.paths['/store/orders/{orderId}'].delete.operationId).toBe('cancelOrder');
    for (const operation of [
      doc.paths['/store/orders'].get,
      doc.paths['/store/orders/{orderId}'].delete,
    ]) {
      expect(operation.tags).toEqual(['orders']);
    }
    expect(doc.paths['/store/orders/{orderId}'].delete.parameters).toEqual([
      expect.objectContaining({
        name: 'orderId',
        in: 'path',
        required: true,
        schema: { type: 'integer', format: 'int64' },
      }),
    ]);
  });

  it('shows, without configuration, this server as it was reached, ending in /v1', async () => {
    const res = await request(t.http)
      .get('/openapi.json')
      .set('Host', 'orders.test:8080')
      .expect(200);
    expect((res.body as Document).servers).toEqual([
      { url: 'http://orders.test:8080/v1', description: 'This server' },
    ]);
  });

  it('requires the bearer scheme on every operation', () => {
    expect(doc.components.securitySchemes.bearer).toEqual(
      expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    );
    expect(doc.security).toEqual([{ bearer: [] }]);
  });

  it('describes Order with int64 ids, a date-time and the added status; Error with three required fields', () => {
    const { Order, Error } = doc.components.schemas;
    expect(Order.properties.id).toEqual(
      expect.objectContaining({ type: 'integer', format: 'int64' }),
    );
    expect(Order.properties.petId).toEqual(
      expect.objectContaining({ type: 'integer', format: 'int64' }),
    );
    expect(Order.properties.shipDate).toEqual(
      expect.objectContaining({ type: 'string', format: 'date-time' }),
    );
    expect(Order.required).toBeUndefined();
    expect(JSON.stringify(Order.properties.status)).toContain('OrderStatus');
    expect(doc.components.schemas.OrderStatus).toEqual(
      expect.objectContaining({ enum: ['pending', 'shipped', 'cancelled'] }),
    );
    expect(Error.required?.sort()).toEqual(['code', 'message', 'status']);
  });

  it('documents every response with its body and headers', () => {
    const list = doc.paths['/store/orders'].get.responses;
    const cancel = doc.paths['/store/orders/{orderId}'].delete.responses;
    expect(Object.keys(list).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '413',
      '429',
      '500',
      '503',
    ]);
    expect(Object.keys(cancel).sort()).toEqual(
      ['204', '400', '401', '403', '404', '409', '413', '429', '500', '503'].sort(),
    );
    expect(cancel['204'].content).toBeUndefined();
    for (const [status, response] of [...Object.entries(list), ...Object.entries(cancel)]) {
      const headers = Object.keys(response.headers ?? {});
      expect(headers).toEqual(
        expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
      );
      if (status === '429' || status === '503') expect(headers).toContain('Retry-After');
      if (status === '401' || status === '403') expect(headers).toContain('WWW-Authenticate');
      if (Number(status) >= 400) {
        expect(response.content?.['application/json'].schema).toEqual({
          $ref: '#/components/schemas/Error',
        });
      }
    }
  });

  it('states the scope each operation requires, in its description and x-required-scopes, with its 403', () => {
    expectOrderScopesDocumented(doc);
    expect(JSON.stringify(doc.components.schemas.Error.properties.code)).toContain(
      'INSUFFICIENT_SCOPE',
    );
  });

  it('documents every route served under /v1, and serves every operation it documents', async () => {
    const routes = t.app.get(RouteTable).routes;
    expectEveryVersionedRouteDocumented(routes, await servedVersionDocuments(t.http, routes));
    const served = new Set(
      routes.map(
        (route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`,
      ),
    );
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) expect(served).toContain(`${method} /v1${path}`);
    }
  });

  it('has the route table the 405s and the documents rely on agree with the routes Express is given', () => {
    // The routes Express was given, as Nest (and Swagger UI) registered them through the HTTP
    // adapter's public methods: the table built from Nest's public metadata must be what is served.
    const express = registered.filter((entry) => !/ \/(docs|openapi|changelog)/.test(entry)).sort();
    expect(express.length).toBeGreaterThan(0);
    const table = t.app
      .get(RouteTable)
      .routes.map((route) => `${route.method} ${route.path}`)
      .sort();
    expect(table).toEqual(express);
  });

  it('is served, with Swagger UI, to anyone: no key, no rate limit', async () => {
    const res = await request(t.http).get('/openapi.json').expect(200);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    // The same document at its versioned address (compared as reached at one host).
    const [legacy, v1] = await Promise.all(
      ['/openapi.json', '/openapi/v1.json'].map((path) =>
        request(t.http).get(path).set('Host', 'orders.test').expect(200),
      ),
    );
    expect(v1.body).toEqual(legacy.body);
    expect(v1.headers['x-ratelimit-limit']).toBeUndefined();
    const ui = await request(t.http).get('/docs/').expect(200);
    expect(ui.headers['content-type']).toMatch(/^text\/html/);
    expect(ui.text).toContain('swagger-ui');
  });

  it('passes redocly lint with the recommended rules, with no error or unexplained warning', async () => {
    await expectRedoclyClean(doc);
  });
});

describe('the OpenAPI servers', () => {
  it('are the configured public and staging base URLs, each ending in /v1 exactly once', async () => {
    const t = await createTestApp({
      env: {
        PUBLIC_BASE_URL: 'https://api.petstore.test',
        STAGING_BASE_URL: 'https://staging.petstore.test/v1/',
      },
    });
    try {
      const res = await request(t.http).get('/openapi.json').expect(200);
      expect((res.body as Document).servers).toEqual([
        { url: 'https://api.petstore.test/v1', description: 'Production' },
        { url: 'https://staging.petstore.test/v1', description: 'Staging' },
      ]);
    } finally {
      await t.close();
    }
  });
});

describe('the contract check of every e2e response', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('refuses an undocumented status, a body off its schema, a missing documented header and one off its schema', async () => {
    const res = await api(t).delete('/v1/store/orders/424242').expect(404);
    const received = { status: res.status, headers: res.headers, body: res.body, text: res.text };
    const path = '/v1/store/orders/424242';
    expect(() => t.contract.check('delete', path, received)).not.toThrow();

    expect(() => t.contract.check('delete', path, { ...received, status: 418 })).toThrow(
      /status 418 is not documented/,
    );
    expect(() =>
      t.contract.check('delete', path, { ...received, body: { code: 'ORDER_NOT_FOUND' } }),
    ).toThrow(/must have required property/);
    expect(() =>
      t.contract.check('delete', path, { ...received, body: { ...res.body, stack: 'at …' } }),
    ).toThrow(/additional properties/);
    const withoutReset = Object.fromEntries(
      Object.entries(res.headers).filter(([name]) => name !== 'x-ratelimit-reset'),
    );
    expect(() => t.contract.check('delete', path, { ...received, headers: withoutReset })).toThrow(
      /x-ratelimit-reset/,
    );
    const offSchema = { ...res.headers, 'x-ratelimit-limit': 'many' };
    expect(() => t.contract.check('delete', path, { ...received, headers: offSchema })).toThrow(
      /headers .*x-ratelimit-limit.*must be integer/,
    );
  });
});
