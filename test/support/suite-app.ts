import { api } from './client';
import { createTestApp, TestApp, TestAppOptions } from './test-app';

/** A describe block's test app and its client (sending the app's key), once `beforeAll` ran. */
export interface SuiteApp {
  t: TestApp;
  client: ReturnType<typeof api>;
}

/**
 * The usual setup of a suite: one test app for the describe block it is called in, created
 * before its tests and closed after them. Read `t` and `client` in hooks and tests, not before.
 */
export function testAppPerSuite(options?: TestAppOptions): SuiteApp {
  const suite = {} as SuiteApp;
  beforeAll(async () => {
    suite.t = await createTestApp(options);
    suite.client = api(suite.t);
  });
  afterAll(() => suite.t.close());
  return suite;
}
