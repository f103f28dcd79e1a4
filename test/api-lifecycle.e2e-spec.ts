import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { api, expectErrorBody } from './support/client';
import { expectRedoclyClean } from './support/openapi-tools';
import { createTestApp, TestApp } from './support/test-app';
import { FUTURE_DEPRECATION, PAST_DEPRECATION } from './fixtures/widgets/widget-lab.controller';
import { WidgetsModule } from './fixtures/widgets/widgets.module';

interface Operation {
  operationId: string;
  description?: string;
  deprecated?: boolean;
  'x-stability'?: string;
  responses: Record<
    string,
    {
      headers?: Record<string, { required?: boolean; description?: string }>;
      content?: Record<string, { examples?: Record<string, { value: unknown }> }>;
    }
  >;
}
interface Document {
  info: { description: string };
  paths: Record<string, Record<string, Operation>>;
}

/** `Deprecation: @<Unix time of since, midnight UTC>` (RFC 9745), worked out by hand. */
const FUTURE_DEPRECATION_HEADER = '@1772323200'; // 2026-03-01T00:00:00Z
const PAST_DEPRECATION_HEADER = '@1705276800'; // 2024-01-15T00:00:00Z
/** `Sunset: <HTTP-date>` (RFC 8594). */
const FUTURE_SUNSET_HEADER = 'Thu, 31 Dec 2099 00:00:00 GMT';
const PAST_SUNSET_HEADER = 'Wed, 15 Jan 2025 00:00:00 GMT';
const DEPRECATION_LINK = `<${FUTURE_DEPRECATION.link}>; rel="deprecation"`;

/**
 * The stability and deprecation markers of docs/api.md, through HTTP, on the widgets fixture's
 * routes (test/fixtures/widgets/widget-lab.controller.ts): one beta, a controller marked
 * experimental with one route beta, one deprecated with its sunset in 2099, one past its sunset.
 * Every request goes through `api()`, which also holds each response to the served document: so
 * the headers documented for these operations are checked on every answer, errors included.
 */
describe('stability and deprecation markers (the widgets fixture)', () => {
  let t: TestApp;
  /** The documents of v1 (where the fixture's routes are) and v2, as served. */
  let doc: Document;
  let v2: Document;

  beforeAll(async () => {
    t = await createTestApp({ imports: [WidgetsModule] });
    [doc, v2] = await Promise.all(
      ['/openapi/v1.json', '/openapi/v2.json'].map(
        async (path) => (await request(t.http).get(path).expect(200)).body as Document,
      ),
    );
  });
  afterAll(() => t.close());

  describe('a beta or experimental route', () => {
    it('answers with X-API-Stability: beta, and no deprecation headers', async () => {
      const res = await api(t).get('/v1/widget-lab/preview').expect(200);
      expect(res.headers['x-api-stability']).toBe('beta');
      for (const name of ['deprecation', 'sunset', 'link'])
        expect(res.headers[name]).toBeUndefined();
    });

    it("takes its controller's marker, or its own where it has one", async () => {
      const sketches = await api(t).get('/v1/widget-lab/sketches').expect(200);
      expect(sketches.headers['x-api-stability']).toBe('experimental');
      const promising = await api(t).get('/v1/widget-lab/sketches/promising').expect(200);
      expect(promising.headers['x-api-stability']).toBe('beta');
    });

    it('carries its marker on an error too (401 without a key)', async () => {
      const res = await api(t, null).get('/v1/widget-lab/preview').expect(401);
      expectErrorBody(res, 401, 'UNAUTHORIZED');
      expect(res.headers['x-api-stability']).toBe('beta');
    });

    it('is marked x-stability in the document', () => {
      expect(doc.paths['/widget-lab/preview'].get['x-stability']).toBe('beta');
      expect(doc.paths['/widget-lab/sketches'].get['x-stability']).toBe('experimental');
      expect(doc.paths['/widget-lab/sketches/promising'].get['x-stability']).toBe('beta');
      const headers = doc.paths['/widget-lab/preview'].get.responses['200'].headers ?? {};
      expect(headers['X-API-Stability']).toEqual(expect.objectContaining({ required: true }));
    });
  });

  describe('a deprecated route before its sunset', () => {
    function expectDeprecationHeaders(res: { headers: Record<string, string> }): void {
      expect(res.headers.deprecation).toBe(FUTURE_DEPRECATION_HEADER);
      expect(res.headers.sunset).toBe(FUTURE_SUNSET_HEADER);
      expect(res.headers.link).toContain(DEPRECATION_LINK);
    }

    it('serves it with Deprecation, Sunset and its Link beside the Link the route sets', async () => {
      const res = await api(t).get('/v1/widget-lab/legacy/1').expect(200);
      expect(res.body).toEqual({ id: 1, name: 'sprocket' });
      expectDeprecationHeaders(res);
      expect(res.headers.link).toBe(`</v1/widgets/1>; rel="alternate", ${DEPRECATION_LINK}`);
      expect(res.headers['x-api-stability']).toBeUndefined();
    });

    it('answers HEAD with the same headers', async () => {
      expectDeprecationHeaders(await api(t).send('head', '/v1/widget-lab/legacy/1').expect(200));
    });

    it("carries them on the handler's 404", async () => {
      const res = await api(t).get('/v1/widget-lab/legacy/2').expect(404);
      expectErrorBody(res, 404, 'NOT_FOUND');
      expectDeprecationHeaders(res);
      expect(res.headers.link).toBe(DEPRECATION_LINK);
    });

    it('carries them on a 413, refused by the body limit before the route is reached', async () => {
      const res = await api(t)
        .get('/v1/widget-lab/legacy/1')
        .set('Content-Type', 'text/plain')
        .send('x'.repeat(16 * 1024 + 1))
        .expect(413);
      expectErrorBody(res, 413, 'PAYLOAD_TOO_LARGE');
      expectDeprecationHeaders(res);
      expect(res.headers.link).toBe(DEPRECATION_LINK);
      const beta = await api(t)
        .get('/v1/widget-lab/preview')
        .set('Content-Type', 'text/plain')
        .send('x'.repeat(16 * 1024 + 1))
        .expect(413);
      expect(beta.headers['x-api-stability']).toBe('beta');
    });

    it('carries them on a 401 without a key, and on a 429 over the limit', async () => {
      const anonymous = await api(t, null).get('/v1/widget-lab/legacy/1').expect(401);
      expectErrorBody(anonymous, 401, 'UNAUTHORIZED');
      expectDeprecationHeaders(anonymous);

      const { key } = await t.keys.issue({
        plan: 'enterprise',
        limits: { perMinute: 1, perDay: 1_000 },
      });
      await api(t, key).get('/v1/widget-lab/legacy/1').expect(200);
      const limited = await api(t, key).get('/v1/widget-lab/legacy/1').expect(429);
      expectErrorBody(limited, 429, 'RATE_LIMIT_EXCEEDED');
      expectDeprecationHeaders(limited);
    });

    it('is deprecated in the document, with its sunset date and its 410', () => {
      const operation = doc.paths['/widget-lab/legacy/{id}'].get;
      expect(operation.deprecated).toBe(true);
      expect(operation.description).toContain(`Sunset: ${FUTURE_DEPRECATION.sunset}`);
      expect(operation.description).toContain(FUTURE_DEPRECATION.link);
      expect(operation['x-stability']).toBeUndefined();
      const gone = operation.responses['410'];
      expect(gone.content?.['application/json'].examples?.GONE.value).toEqual({
        code: 'GONE',
        message: expect.any(String),
        status: 410,
      });
      for (const response of Object.values(operation.responses)) {
        for (const name of ['Deprecation', 'Sunset', 'Link']) {
          expect(response.headers?.[name]).toEqual(expect.objectContaining({ required: true }));
        }
      }
    });
  });

  describe('a deprecated route from its sunset on', () => {
    it('answers 410 GONE in the Error shape, with Deprecation and Sunset', async () => {
      const res = await api(t).get('/v1/widget-lab/retired').expect(410);
      expect(res.body).toEqual({
        code: 'GONE',
        message: 'This route is gone: it was retired at its sunset date',
        status: 410,
      });
      expect(res.headers.deprecation).toBe(PAST_DEPRECATION_HEADER);
      expect(res.headers.sunset).toBe(PAST_SUNSET_HEADER);
      // No link was given: no Link at all.
      expect(res.headers.link).toBeUndefined();
    });

    it('answers 410 to a client without a key too, as it would 404 an unknown path', async () => {
      const res = await api(t, null).get('/v1/widget-lab/retired').expect(410);
      expectErrorBody(res, 410, 'GONE');
      expect(res.headers.sunset).toBe(PAST_SUNSET_HEADER);
    });

    it('is deprecated in the document with the sunset date that has passed', () => {
      const operation = doc.paths['/widget-lab/retired'].get;
      expect(operation.deprecated).toBe(true);
      expect(operation.description).toContain(`Sunset: ${PAST_DEPRECATION.sunset}`);
      expect(operation.responses['410']).toBeDefined();
    });
  });

  describe('routes without a marker', () => {
    it('carry none of the headers, and keep their own Link as it was', async () => {
      const widget = await api(t).get('/v1/widgets/1').expect(200);
      const orders = await api(t).get('/v1/store/orders').expect(200);
      for (const res of [widget, orders]) {
        for (const name of ['deprecation', 'sunset', 'x-api-stability']) {
          expect(res.headers[name]).toBeUndefined();
        }
      }
      expect(widget.headers.link).toBeUndefined();
      // Nor on an error answered before routing, beside marked routes.
      const refused = await api(t)
        .get('/v1/widgets/1')
        .set('Content-Type', 'text/plain')
        .send('x'.repeat(16 * 1024 + 1))
        .expect(413);
      for (const name of ['deprecation', 'sunset', 'x-api-stability', 'link']) {
        expect(refused.headers[name]).toBeUndefined();
      }
      expect(orders.headers.link).toBe('</v2/store/orders>; rel="successor-version"');
    });

    it('are neither deprecated nor marked in the document, and have no 410', () => {
      for (const [path, item] of Object.entries(doc.paths)) {
        if (path.startsWith('/widget-lab')) continue;
        for (const operation of Object.values(item)) {
          expect({ path, deprecated: operation.deprecated }).toEqual({
            path,
            deprecated: undefined,
          });
          expect(operation['x-stability']).toBeUndefined();
          expect(operation.responses['410']).toBeUndefined();
        }
      }
    });
  });

  it('lists GONE among the error codes, and says how markers and changes are announced', () => {
    expect(doc.info.description).toContain('`GONE` (410)');
    expect(doc.info.description).toContain('`X-API-Stability`');
    expect(doc.info.description).toMatch(/CHANGELOG/);
  });

  it('serves the changelog the documents link to, to anyone, with 405 for other methods', async () => {
    for (const { info } of [doc, v2]) expect(info.description).toContain('[CHANGELOG](/changelog)');
    const res = await request(t.http).get('/changelog').expect(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(res.text).toBe(readFileSync(join(__dirname, '../CHANGELOG.md'), 'utf8'));
    expect(res.text).toContain('## [Unreleased]');
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    const wrong = await request(t.http).post('/changelog').expect(405);
    expect(wrong.headers.allow).toBe('GET, HEAD');
    // The image serves it too: its final stage copies it beside dist/.
    const dockerfile = readFileSync(join(__dirname, '../docker/Dockerfile'), 'utf8');
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(finalStage).toMatch(/^COPY CHANGELOG\.md \.\/$/m);
  });

  it('keeps the document valid: redocly lint with the recommended rules', async () => {
    await expectRedoclyClean(doc);
  });
});
