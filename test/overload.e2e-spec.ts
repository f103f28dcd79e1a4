import { PinoLogger } from 'nestjs-pino';
import { generateApiKey } from '../src/auth/api-key';
import { MetricsService } from '../src/metrics/metrics.service';
import { PlanThrottlerGuard } from '../src/rate-limit/plan-throttler.guard';
import { startAdminApp } from './support/admin-app';
import { AdmissionControl, type Criticality } from '../src/overload/admission-control';
import { api, expectErrorBody } from './support/client';
import { eventually } from './support/eventually';
import { insertOrders, statusOf } from './support/orders';
import { testAppPerSuite } from './support/suite-app';

/** A fixed limit (the adaptive one's floor and ceiling alike), so that a test sets the load. */
const LIMIT = 10;
const LOG_INTERVAL_MS = 200;

/**
 * Load shedding at the door, driven deterministically: the limit is fixed, and a test holds some
 * of it as requests in flight would, then sends requests of each criticality and sees which are
 * let in. Cancels with a valid key fill the whole limit, lists with a valid key 80 % of it,
 * requests without a known key half of it; probes are always let in.
 */
describe('load shedding by criticality', () => {
  const suite = testAppPerSuite({
    env: {
      OVERLOAD_SHEDDING: 'on',
      OVERLOAD_MIN_CONCURRENCY: String(LIMIT),
      OVERLOAD_MAX_CONCURRENCY: String(LIMIT),
      OVERLOAD_LOG_INTERVAL_MS: String(LOG_INTERVAL_MS),
    },
  });
  let held: number[] = [];

  /** Takes `n` places of the limit, as `n` requests in flight of that criticality would. */
  const hold = (n: number, criticality: Criticality = 'critical'): void => {
    const admission = suite.t.app.get(AdmissionControl);
    for (let i = 0; i < n; i++) {
      const admittedAt = admission.tryAcquire(criticality);
      if (admittedAt === undefined) throw new Error('the limit is already full');
      held.push(admittedAt);
    }
  };

  beforeAll(async () => {
    // The app's key is known to the instance once it has been used: a valid key, cached.
    await suite.client.get('/v1/store/orders').expect(200);
  });
  afterEach(() => {
    const admission = suite.t.app.get(AdmissionControl);
    for (const admittedAt of held) admission.release(admittedAt);
    held = [];
    jest.restoreAllMocks();
  });

  const expectOverloaded = (res: {
    status: number;
    body: unknown;
    headers: Record<string, string>;
  }) => {
    expectErrorBody(res, 503, 'OVERLOADED');
    expect(res.headers['retry-after']).toBe('1');
  };

  it('lets every request in while the instance is under its limit', async () => {
    hold(4);
    await suite.client.get('/v1/store/orders').expect(200);
    await suite.client.get('/v2/store/orders?limit=5').expect(200);
    await api(suite.t, null).get('/v1/store/orders').expect(401);
  });

  it('refuses a list with 503 OVERLOADED and Retry-After, yet serves a cancel, past 80 % of the limit', async () => {
    const [id] = await insertOrders(suite.t.db, [{ status: 'pending' }]);
    hold(8);
    expectOverloaded(await suite.client.get('/v1/store/orders'));
    expectOverloaded(await suite.client.get('/v2/store/orders?limit=5'));
    await suite.client.delete(`/v1/store/orders/${id}`).expect(204);
    expect(await statusOf(suite.t.db, id)).toBe('cancelled');
  });

  it('refuses a cancel too once the whole limit is in flight', async () => {
    const [id] = await insertOrders(suite.t.db, [{ status: 'pending' }]);
    hold(LIMIT);
    expectOverloaded(await suite.client.delete(`/v1/store/orders/${id}`));
    expect(await statusOf(suite.t.db, id)).toBe('pending');
  });

  it('refuses requests without a valid key first: anonymous and made-up keys past half the limit', async () => {
    hold(5);
    await suite.client.get('/v1/store/orders').expect(200);
    expectOverloaded(await api(suite.t, null).get('/v1/store/orders'));
    expectOverloaded(await api(suite.t, generateApiKey()).get('/v2/store/orders?limit=5'));
  });

  it("takes nothing from a refused request's rate limits, yet tells where they stand", async () => {
    hold(LIMIT);
    const first = await suite.client.get('/v1/store/orders');
    const second = await suite.client.get('/v1/store/orders');
    expectOverloaded(second);
    expect(second.headers['x-ratelimit-remaining']).toBe(first.headers['x-ratelimit-remaining']);
  });

  it('never refuses the health probes', async () => {
    hold(LIMIT);
    await suite.client.get('/health/live').expect(200);
    await suite.client.get('/health/ready').expect(200);
  });

  it('never refuses the admin listener', async () => {
    const admin = await startAdminApp(suite.t);
    try {
      hold(LIMIT);
      await admin.call('get', '/admin/v1/keys').expect(200);
    } finally {
      await admin.admin.close();
    }
  });

  it("refuses at the door: the route's guards, and so the database, never see the request", async () => {
    const guard = jest.spyOn(PlanThrottlerGuard.prototype, 'canActivate');
    hold(LIMIT);
    expectOverloaded(await suite.client.get('/v1/store/orders'));
    expect(guard).not.toHaveBeenCalled();
    held.forEach((admittedAt) => suite.t.app.get(AdmissionControl).release(admittedAt));
    held = [];
    await suite.client.get('/v1/store/orders').expect(200);
    expect(guard).toHaveBeenCalledTimes(1);
  });

  it('counts refused requests by route in /metrics, with the limit and the requests in flight', async () => {
    hold(LIMIT);
    const metrics = suite.t.app.get(MetricsService);
    const shedLists = async (): Promise<number> => {
      const text = await metrics.render();
      const line = text
        .split('\n')
        .find((l) =>
          l.startsWith('http_requests_shed_total{route="/v1/store/orders",criticality="default"}'),
        );
      return line === undefined ? 0 : Number(line.split(' ').pop());
    };
    const before = await shedLists();
    expectOverloaded(await suite.client.get('/v1/store/orders'));
    expectOverloaded(await suite.client.get('/v1/store/orders'));
    expect(await shedLists()).toBe(before + 2);
    const text = await metrics.render();
    expect(text).toMatch(new RegExp(`^overload_concurrency_limit ${LIMIT}$`, 'm'));
    expect(text).toMatch(new RegExp(`^overload_requests_in_flight ${LIMIT}$`, 'm'));
  });

  it('logs refusals once per interval at warn, with their counts by route, never as errors', async () => {
    const warn = jest.spyOn(PinoLogger.prototype, 'warn');
    const error = jest.spyOn(PinoLogger.prototype, 'error');
    const shedLines = () =>
      warn.mock.calls.filter(([, msg]) => msg === 'requests shed: the instance is overloaded');
    // A line of an earlier test's refusals may still be due: let it pass first.
    await new Promise((resolve) => setTimeout(resolve, LOG_INTERVAL_MS * 2));
    warn.mockClear();
    hold(LIMIT);
    for (let i = 0; i < 3; i++) expectOverloaded(await suite.client.get('/v1/store/orders'));
    expectOverloaded(await suite.client.get('/v2/store/orders?limit=5'));
    await eventually(
      () => Promise.resolve(shedLines().length),
      (n) => n > 0,
      5_000,
    );
    expect(shedLines()).toEqual([
      [
        {
          shed: 4,
          byRoute: { '/v1/store/orders': 3, '/v2/store/orders': 1 },
          intervalMs: LOG_INTERVAL_MS,
        },
        'requests shed: the instance is overloaded',
      ],
    ]);
    expect(error).not.toHaveBeenCalled();
  });
});
