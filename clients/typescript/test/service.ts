import type { NestExpressApplication } from '@nestjs/platform-express';
import { startAdminApp } from '../../../test/support/admin-app';
import {
  createTestApp,
  listen,
  type TestApp,
  type TestAppOptions,
} from '../../../test/support/test-app';

/** The real service for a describe block: the API and the admin listener, each on its own port. */
export interface Service {
  t: TestApp;
  admin: NestExpressApplication;
  /** The API's root, as a client's `baseUrl`. */
  url: string;
  /** The admin listener's root, as a client's `adminBaseUrl`. */
  adminUrl: string;
}

/**
 * The service (its own database copy) listening on free loopback ports for the describe block it
 * is called in, from `beforeAll` to `afterAll`. Read the fields in hooks and tests, not before.
 */
export function servicePerSuite(options?: TestAppOptions): Service {
  const suite = {} as Service;
  beforeAll(async () => {
    suite.t = await createTestApp(options);
    suite.url = await listen(suite.t);
    const admin = await startAdminApp(suite.t);
    suite.admin = admin.admin;
    await admin.admin.listen(0, '127.0.0.1');
    suite.adminUrl = await admin.admin.getUrl();
  });
  afterAll(async () => {
    await suite.admin.close();
    await suite.t.close();
  });
  return suite;
}

/** A fetch that sends each request with the global fetch and records it, its answer's status and when. */
export function recordingFetch() {
  const sent: { request: Request; status: number; retryAfter: string | null; at: number }[] = [];
  const send = async (request: Request): Promise<Response> => {
    const copy = request.clone();
    const response = await fetch(request);
    const retryAfter = response.headers.get('Retry-After');
    sent.push({ request: copy, status: response.status, retryAfter, at: Date.now() });
    return response;
  };
  return { sent, fetch: send };
}
