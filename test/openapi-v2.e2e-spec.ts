import { join } from 'node:path';
import createClient from 'openapi-fetch';
import request from 'supertest';
import {
  expectHeldClientTypes,
  expectOrderScopesDocumented,
  expectRedoclyClean,
} from './support/openapi-tools';
import type { paths } from './support/petstore-api-v2';
import { listeningAppPerSuite } from './support/suite-app';
import { createTestApp, TestApp } from './support/test-app';

/** The v2 client's types, generated from the served v2 document by openapi-typescript. */
const CLIENT_TYPES = join(__dirname, 'support/petstore-api-v2.ts');

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Record<string, unknown>;
  examples?: Record<string, { value: unknown }>;
}

interface Response {
  headers?: Record<string, { required?: boolean; schema?: object }>;
  content?: Record<string, { schema: object; examples?: Record<string, { value: unknown }> }>;
}

interface Document {
  openapi: string;
  info: { title: string; version: string; description?: string };
  tags?: { name: string }[];
  servers?: { url: string; description?: string }[];
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        tags: string[];
        parameters?: Parameter[];
        responses: Record<string, Response>;
      }
    >
  >;
  components: {
    schemas: Record<string, { required?: string[]; properties?: Record<string, object> }>;
  };
}

describe('the OpenAPI document of v2', () => {
  let t: TestApp;
  let doc: Document;

  beforeAll(async () => {
    t = await createTestApp();
    doc = (await request(t.http).get('/openapi/v2.json').expect(200)).body as Document;
  });
  afterAll(() => t.close());

  it('is "Petstore API" 2.0.0 with servers ending in /v2, announcing that v1 stays', async () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.title).toBe('Petstore API');
    expect(doc.info.version).toBe('2.0.0');
    expect(doc.info.description).toContain('/openapi/v1.json');
    const res = await request(t.http)
      .get('/openapi/v2.json')
      .set('Host', 'orders.test')
      .expect(200);
    expect((res.body as Document).servers).toEqual([
      { url: 'http://orders.test/v2', description: 'This server' },
    ]);
  });

  it('has the two operations of v2 and nothing of v1', () => {
    expect(Object.keys(doc.paths).sort()).toEqual(['/store/orders', '/store/orders/{orderId}']);
    expect(doc.paths['/store/orders'].get.operationId).toBe('listOrders');
    expect(doc.paths['/store/orders/{orderId}'].delete.operationId).toBe('cancelOrder');
    expect(Object.keys(doc.paths['/store/orders'])).toEqual(['get']);
  });

  it('documents every query parameter with its schema, rules and examples', () => {
    const parameters = doc.paths['/store/orders'].get.parameters ?? [];
    expect(parameters.map((p) => p.name).sort()).toEqual(
      [
        'complete',
        'cursor',
        'limit',
        'petId',
        'shipDateFrom',
        'shipDateTo',
        'sort',
        'status',
      ].sort(),
    );
    for (const parameter of parameters) {
      expect(parameter).toEqual(
        expect.objectContaining({ in: 'query', required: false, schema: expect.any(Object) }),
      );
      expect(parameter.description).toContain('INVALID_');
      // A cursor is only valid for its own filters: an example would be sent by "Try it out".
      if (parameter.name !== 'cursor') {
        expect(Object.keys(parameter.examples ?? {}).length).toBeGreaterThan(0);
      }
    }
    const byName = Object.fromEntries(parameters.map((p) => [p.name, p]));
    expect(byName.status).toEqual(expect.objectContaining({ style: 'form', explode: false }));
    expect(byName.status.schema).toEqual(
      expect.objectContaining({
        type: 'array',
        items: { type: 'string', enum: ['pending', 'shipped', 'cancelled'] },
      }),
    );
    expect(byName.petId.schema).toEqual({ type: 'integer', format: 'int64' });
    expect(byName.limit.schema).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: 100,
    });
    expect(byName.sort.schema).toEqual(
      expect.objectContaining({ enum: ['id', '-id', 'shipDate', '-shipDate'], default: 'id' }),
    );
    expect(byName.shipDateFrom.schema).toEqual({ type: 'string', format: 'date-time' });
  });

  it('documents the page, its Link header and the new error codes', () => {
    const responses = doc.paths['/store/orders'].get.responses;
    expect(responses['200'].content?.['application/json'].schema).toEqual({
      $ref: '#/components/schemas/OrderPage',
    });
    expect(responses['200'].headers?.Link).toEqual(
      expect.objectContaining({ required: false, schema: { type: 'string' } }),
    );
    const page = doc.components.schemas.OrderPage;
    expect(page.required?.sort()).toEqual(['data', 'hasMore']);
    expect(Object.keys(page.properties ?? {}).sort()).toEqual(['data', 'hasMore', 'nextCursor']);
    const badRequest = responses['400'].content?.['application/json'].examples ?? {};
    expect(Object.keys(badRequest)).toEqual(
      expect.arrayContaining(['INVALID_QUERY', 'INVALID_CURSOR']),
    );
    expect(doc.info.description).toContain('`INVALID_QUERY` (400)');
    expect(doc.info.description).toContain('`INVALID_CURSOR` (400)');
  });

  it('states the scope each operation requires, as v1 does: orders:read to list, orders:cancel to cancel', () => {
    expectOrderScopesDocumented(doc);
  });

  it('leaves the v1 document as it was: at /openapi.json and /openapi/v1.json, without v2', async () => {
    const get = async (path: string): Promise<Document> =>
      (await request(t.http).get(path).set('Host', 'orders.test').expect(200)).body as Document;
    const v1 = await get('/openapi.json');
    const again = await get('/openapi/v1.json');
    expect(again).toEqual(v1);
    expect(v1.info.version).toBe('1.0.0');
    expect(v1.servers?.[0].url).toMatch(/\/v1$/);
    expect(v1.components.schemas.OrderPage).toBeUndefined();
    expect(JSON.stringify(v1)).not.toContain('INVALID_CURSOR');
    expect(v1.info.description).toContain('rel="successor-version"');
    expect(v1.paths['/store/orders'].get.responses['200'].headers?.Link).toEqual(
      expect.objectContaining({ required: true }),
    );
  });

  it('passes redocly lint with the recommended rules, with no error or warning', async () => {
    await expectRedoclyClean(doc);
  });

  it('generates the typed client that the repository holds (regenerate: UPDATE_OPENAPI_CLIENT=1)', async () => {
    await expectHeldClientTypes(doc, CLIENT_TYPES);
  });
});

describe('a typed v2 client generated from the document (openapi-typescript + openapi-fetch)', () => {
  const app = listeningAppPerSuite();

  it('walks every page of a filtered, sorted list', async () => {
    await app.t.db.query(
      `INSERT INTO orders (pet_id, ship_date, status)
       SELECT g % 3, CASE WHEN g % 4 = 0 THEN NULL
                          ELSE timestamptz '2026-11-22' + (g % 9) * interval '1 day' END,
              (ARRAY['pending', 'shipped', 'cancelled'])[g % 3 + 1]
         FROM generate_series(1, 95) AS g`,
    );
    const { servers } = (await (await fetch(`${app.url}/openapi/v2.json`)).json()) as Document;
    const client = createClient<paths>({
      baseUrl: servers?.[0].url,
      headers: { Authorization: `Bearer ${app.t.key}` },
      querySerializer: { array: { style: 'form', explode: false } },
    });

    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { data, response } = await client.GET('/store/orders', {
        params: {
          query: { status: ['pending', 'shipped'], sort: '-shipDate', limit: 7, cursor },
        },
      });
      expect(response.status).toBe(200);
      if (!data) throw new Error('no page');
      expect(data.data.length).toBeLessThanOrEqual(7);
      expect(data.nextCursor !== undefined).toBe(data.hasMore);
      seen.push(...data.data.map((order) => order.id ?? 0));
      cursor = data.nextCursor;
      pages += 1;
    } while (cursor !== undefined);

    const { rows } = await app.t.db.query<{ id: string }>(
      `SELECT id FROM orders WHERE status IN ('pending', 'shipped')
        ORDER BY ship_date DESC NULLS LAST, id DESC`,
    );
    expect(seen).toEqual(rows.map((row) => Number(row.id)));
    expect(pages).toBe(Math.ceil(rows.length / 7));

    const refused = await client.GET('/store/orders', { params: { query: { limit: 1001 } } });
    expect(refused.response.status).toBe(400);
    expect(refused.error).toEqual(expect.objectContaining({ code: 'INVALID_QUERY' }));
  });
});
