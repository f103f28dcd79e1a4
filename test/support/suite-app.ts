import { api } from './client';
import { RedisServer } from './redis-server';
import { createTestApp, createTestDatabase, listen, TestApp, TestAppOptions } from './test-app';

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

/** Two instances of the app, as behind a load balancer, once `beforeAll` ran. */
export interface TwoInstances {
  a: TestApp;
  b: TestApp;
  /** The database both use. */
  databaseUrl: string;
  /** The redis-server both share, with `redis: true`. */
  redis?: RedisServer;
}

/** What the two instances are made with: their settings and modules, and whether Redis. */
type TwoInstancesOptions = Pick<TestAppOptions, 'env' | 'imports'> & { redis?: boolean };

/**
 * Two instances of the app on one database for the describe block it is called in, created
 * before its tests and closed after them; with `redis`, sharing a real redis-server started for
 * them (REDIS_URL). Read the fields in hooks and tests, not before.
 */
export function twoInstancesPerSuite(
  options: TwoInstancesOptions & { redis: true },
): TwoInstances & { redis: RedisServer };
export function twoInstancesPerSuite(options?: TwoInstancesOptions): TwoInstances;
export function twoInstancesPerSuite(options: TwoInstancesOptions = {}): TwoInstances {
  const suite = {} as TwoInstances;
  beforeAll(async () => {
    if (options.redis) suite.redis = await RedisServer.start();
    suite.databaseUrl = await createTestDatabase();
    const env = { ...options.env, ...(suite.redis && { REDIS_URL: suite.redis.url }) };
    const instance = { env, databaseUrl: suite.databaseUrl, imports: options.imports };
    suite.a = await createTestApp(instance);
    suite.b = await createTestApp(instance);
  });
  afterAll(async () => {
    await suite.a.close();
    await suite.b.close();
    await suite.redis?.stop();
  });
  return suite;
}
