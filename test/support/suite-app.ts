import { api } from './client';
import { createTestApp, listen, TestApp, TestAppOptions } from './test-app';

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

export interface ListeningSuiteApp extends SuiteApp {
  /** Where the app listens, on a free loopback port. */
  url: string;
}

/** {@link testAppPerSuite}, served on a free loopback port for clients that need a real URL. */
export function listeningAppPerSuite(options?: TestAppOptions): ListeningSuiteApp {
  const suite = testAppPerSuite(options) as ListeningSuiteApp;
  beforeAll(async () => {
    suite.url = await listen(suite.t);
  });
  return suite;
}
