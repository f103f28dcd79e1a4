import type { NestExpressApplication } from '@nestjs/platform-express';
import addFormats from 'ajv-formats';
import type { Server } from 'node:http';
import OpenAPIBackend, { type Document, SetMatchType } from 'openapi-backend';
import request from 'supertest';
import { createAdminApp } from '../../src/admin/admin-app';
import { createTestApp, type TestApp, type TestAppOptions } from './test-app';

/** The admin document as the admin listener serves it, to hold every response to. */
export async function adminContract(http: Server) {
  const res = await request(http).get('/openapi/admin.json').expect(200);
  const document = res.body as Document;
  const backend = new OpenAPIBackend({
    definition: document,
    strict: true,
    customizeAjv: (ajv) => {
      addFormats(ajv, ['date-time', 'uuid']);
      ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
      return ajv;
    },
  });
  await backend.init();
  return (method: string, path: string, r: request.Response): void => {
    const operation = backend.matchOperation({ method, path: path.split('?')[0], headers: {} });
    if (!operation) throw new Error(`${method} ${path}: no operation in the admin document`);
    const where = `${method.toUpperCase()} ${path} → ${r.status}`;
    const documented = operation.responses?.[String(r.status)];
    if (!documented || '$ref' in documented) throw new Error(`${where}: not documented`);
    const missing = Object.entries(documented.headers ?? {})
      .filter(([, header]) => 'required' in header && header.required === true)
      .map(([name]) => name.toLowerCase())
      .filter((name) => !(name in r.headers));
    if (missing.length > 0) throw new Error(`${where}: headers missing: ${missing.join(', ')}`);
    const headers = backend.validateResponseHeaders(r.headers, operation, {
      statusCode: r.status,
      setMatchType: SetMatchType.Any,
    });
    if (!headers.valid) throw new Error(`${where}: headers ${JSON.stringify(headers.errors)}`);
    if (r.status === 204) {
      if (r.text) throw new Error(`${where}: a body on a 204`);
      return;
    }
    const body = backend.validateResponse(r.body, operation, r.status);
    if (!body.valid) throw new Error(`${where}: body ${JSON.stringify(body.errors)}`);
  };
}

export type AdminMethod = 'get' | 'post' | 'patch' | 'delete';

/** The admin application beside a test app, on its database, and an admin key. */
export interface AdminTestApp {
  t: TestApp;
  admin: NestExpressApplication;
  http: Server;
  adminKey: string;
  adminKeyId: string;
  check: Awaited<ReturnType<typeof adminContract>>;
  call(method: AdminMethod, path: string, key?: string | null): request.Test;
}

/**
 * The admin application as `main.ts` creates it (`createAdminApp`), beside the test app (its
 * database, rate-limit storage and metrics), with an enterprise key granted `keys:admin`; `check`
 * holds a response to the admin document.
 */
export async function startAdminApp(t: TestApp): Promise<AdminTestApp> {
  const admin = await createAdminApp(t.app, { logger: false });
  const http = admin.getHttpServer();
  const issued = await t.keys.issue({
    plan: 'enterprise',
    name: 'admin',
    limits: { perMinute: 1_000_000, perDay: 1_000_000_000 },
    scopes: ['keys:admin'],
  });
  const check = await adminContract(http);
  const call = (method: AdminMethod, path: string, key: string | null = issued.key) => {
    const req = request(http)[method](path);
    if (key !== null) void req.set('Authorization', `Bearer ${key}`);
    return req;
  };
  return { t, admin, http, adminKey: issued.key, adminKeyId: issued.id, check, call };
}

/**
 * {@link startAdminApp} beside a test app of its own (its own database) for the describe block it
 * is called in, created before its tests and closed after them. Read the fields in hooks and
 * tests, not before.
 */
export function adminAppPerSuite(options?: TestAppOptions): AdminTestApp {
  const suite = {} as AdminTestApp;
  beforeAll(async () => {
    Object.assign(suite, await startAdminApp(await createTestApp(options)));
  });
  afterAll(async () => {
    await suite.admin.close();
    await suite.t.close();
  });
  return suite;
}
