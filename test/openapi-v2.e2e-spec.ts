import request from 'supertest';
import { expectOrderScopesDocumented, expectRedoclyClean } from './support/openapi-tools';
import { createTestApp, TestApp } from './support/test-app';

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
});
