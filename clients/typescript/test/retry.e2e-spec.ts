import { StoreOrdersClient, StoreOrdersError } from 'store-orders-client';
import { driveClock } from '../../../test/support/clock';
import { insertOrders } from '../../../test/support/orders';
import { recordingFetch, servicePerSuite } from './service';

/**
 * Retries against the real rate limiter. A key allowed one request a minute is refused for the
 * rest of the minute its first request started. The service's clock is then driven to a few
 * seconds before that minute ends, so the retried request waits out only those seconds (in real
 * time, as a client would) instead of the whole minute.
 */
describe('the TypeScript client retrying 429', () => {
  const service = servicePerSuite();

  it('returns a 429 at once with retry off or a wait too long, and retries it after Retry-After', async () => {
    const { key } = await service.t.keys.issue({
      plan: 'enterprise',
      limits: { perMinute: 1, perDay: 1000 },
    });
    const once = recordingFetch();
    const noRetry = new StoreOrdersClient({
      baseUrl: service.url,
      apiKey: key,
      retry: false,
      fetch: once.fetch,
    });
    const firstSentAt = Date.now();
    await expect(noRetry.orders.list()).resolves.toEqual([]);
    const windowStart = Date.now();

    const refused = await noRetry.orders.list().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(StoreOrdersError);
    expect(refused).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', status: 429 });
    const { retryAfter } = refused as StoreOrdersError;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(noRetry.rateLimit).toEqual(expect.objectContaining({ limit: 1, remaining: 0 }));
    expect(once.sent.map(({ status }) => status)).toEqual([200, 429]);

    // A wait longer than the client accepts: the 429 comes back at once, not after a minute.
    const impatient = recordingFetch();
    const started = Date.now();
    await expect(
      new StoreOrdersClient({
        baseUrl: service.url,
        apiKey: key,
        retry: { maxWaitSeconds: 0 },
        fetch: impatient.fetch,
      }).orders.list(),
    ).rejects.toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    expect(impatient.sent).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5000);

    // The window ends a minute after the first request reached the service, so no sooner than a
    // minute after it was sent: the service's clock is moved on to 3 s before that.
    const clock = driveClock(service.t.app, { running: true });
    clock.advance(firstSentAt + 60_000 - 3_000 - Date.now());

    // The default policy waits as the answer says, then succeeds.
    const retried = recordingFetch();
    const patient = new StoreOrdersClient({
      baseUrl: service.url,
      apiKey: key,
      fetch: retried.fetch,
    });
    await expect(patient.orders.list()).resolves.toEqual([]);
    expect(retried.sent.map(({ status }) => status)).toEqual([429, 200]);
    const [first, second] = retried.sent;
    const asked = Number(first.retryAfter);
    expect(asked).toBeGreaterThanOrEqual(1);
    // What was left of the window on the service's clock, not a whole minute.
    expect(asked).toBeLessThanOrEqual(10);
    expect(second.at - first.at).toBeGreaterThanOrEqual(asked * 1000);
    expect(second.at).toBeLessThan(windowStart + 70_000);
    expect(patient.rateLimit).toEqual(expect.objectContaining({ limit: 1, remaining: 0 }));
  });
});

/**
 * A v2 page over its database budget is answered 503 with Retry-After: here the orders table is
 * locked by another transaction until the client has had its first 503.
 */
describe('the TypeScript client retrying 503', () => {
  const service = servicePerSuite({ env: { PAGE_DATABASE_BUDGET_MS: '300' } });

  it('retries a page answered 503 after Retry-After, and gets it', async () => {
    const [order] = await insertOrders(service.t.db, [{ status: 'pending' }]);
    const locker = await service.t.db.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
      const recorder = recordingFetch();
      const client = new StoreOrdersClient({
        baseUrl: service.url,
        apiKey: service.t.key,
        fetch: async (request) => {
          const response = await recorder.fetch(request);
          if (response.status === 503) await locker.query('ROLLBACK');
          return response;
        },
      });
      const walked = [];
      for await (const found of client.orders.each({ status: 'pending' })) walked.push(found.id);
      expect(walked).toEqual([order]);
      expect(recorder.sent.map(({ status }) => status)).toEqual([503, 200]);
      const [refused, served] = recorder.sent;
      expect(refused.retryAfter).toMatch(/^\d+$/);
      expect(served.at - refused.at).toBeGreaterThanOrEqual(Number(refused.retryAfter) * 1000);
    } finally {
      // Ends the lock if no 503 came (a failing run); after the client's ROLLBACK, a no-op.
      await locker.query('ROLLBACK');
      locker.release();
    }
  }, 60_000);
});
