import { retryAfterSeconds } from './errors';
import { parseExact } from './exact-json';
import { retrying, type Timing } from './retry';

/** A server stand-in answering `statuses` in turn, recording the methods it was sent. */
function answering(statuses: number[], headers: Record<string, string> = {}) {
  const methods: string[] = [];
  const send = (request: Request): Promise<Response> => {
    methods.push(request.method);
    return Promise.resolve(new Response(null, { status: statuses[methods.length - 1], headers }));
  };
  return { methods, send };
}

/**
 * A clock the test drives: every wait is recorded and over at once (unless the signal aborted),
 * the jitter's draws are `random`.
 */
function fakeTiming(random = 0.5) {
  const waits: number[] = [];
  const timing: Timing = {
    sleep: (ms, signal) => {
      waits.push(ms);
      signal.throwIfAborted();
      return Promise.resolve();
    },
    random: () => random,
  };
  return { waits, timing };
}

const get = (): Request => new Request('http://x/v2/store/orders');

describe('retrying', () => {
  const now = { 'Retry-After': '0' };

  it('retries 429 for any method, at most maxTries tries in all', async () => {
    const server = answering([429, 429, 429, 200], now);
    const response = await retrying(server.send, {
      retry: { maxTries: 3 },
      timing: fakeTiming().timing,
    })(new Request('http://x/admin/v1/keys', { method: 'POST', body: '{}' }));
    expect(response.status).toBe(429);
    expect(server.methods).toEqual(['POST', 'POST', 'POST']);
  });

  it('retries 503 of idempotent methods only', async () => {
    const { timing } = fakeTiming();
    const del = answering([503, 204], now);
    expect(
      (
        await retrying(del.send, { retry: {}, timing })(
          new Request('http://x', { method: 'DELETE' }),
        )
      ).status,
    ).toBe(204);
    const post = answering([503, 201], now);
    const request = new Request('http://x', { method: 'POST', body: '{}' });
    expect((await retrying(post.send, { retry: {}, timing })(request)).status).toBe(503);
    expect(post.methods).toEqual(['POST']);
  });

  it('waits what Retry-After says, a 503 exactly as a 429, plus under a second of jitter', async () => {
    for (const status of [429, 503]) {
      for (const random of [0, 0.999]) {
        const clock = fakeTiming(random);
        const server = answering([status, status, 200], { 'Retry-After': '7' });
        const response = await retrying(server.send, { retry: {}, timing: clock.timing })(get());
        expect(response.status).toBe(200);
        expect(clock.waits).toEqual([7000 + 1000 * random, 7000 + 1000 * random]);
      }
      // Asked for more than maxWaitSeconds: answered at once, whichever the status.
      const clock = fakeTiming();
      const long = answering([status, 200], { 'Retry-After': '61' });
      expect((await retrying(long.send, { retry: {}, timing: clock.timing })(get())).status).toBe(
        status,
      );
      expect(clock.waits).toEqual([]);
      const date = new Date(Date.now() + 3_600_000).toUTCString();
      const dated = answering([status, 200], { 'Retry-After': date });
      expect((await retrying(dated.send, { retry: {}, timing: clock.timing })(get())).status).toBe(
        status,
      );
    }
  });

  it('without Retry-After backs off 1 s, 2 s … with equal jitter: half fixed, half random', async () => {
    const waitsWith = async (random: number): Promise<number[]> => {
      const clock = fakeTiming(random);
      const server = answering([503, 503, 503, 200]);
      await retrying(server.send, { retry: { maxTries: 4 }, timing: clock.timing })(get());
      return clock.waits;
    };
    expect(await waitsWith(0)).toEqual([500, 1000, 2000]);
    expect(await waitsWith(0.5)).toEqual([750, 1500, 3000]);
    expect(await waitsWith(1)).toEqual([1000, 2000, 4000]);
  });

  it('retries a failed connection of GET and DELETE, never of POST', async () => {
    for (const method of ['GET', 'DELETE', 'POST']) {
      const clock = fakeTiming(0);
      let tries = 0;
      const send = (): Promise<Response> =>
        ++tries < 3
          ? Promise.reject(new TypeError('fetch failed'))
          : Promise.resolve(new Response(null, { status: 204 }));
      const sent = retrying(send, { retry: {}, timing: clock.timing })(
        new Request('http://x/v2/store/orders/1', { method }),
      );
      if (method === 'POST') {
        await expect(sent).rejects.toThrow('fetch failed');
        expect(tries).toBe(1);
      } else {
        expect((await sent).status).toBe(204);
        expect(clock.waits).toEqual([500, 1000]);
      }
    }
    // The last try's failure is the call's.
    const down = (): Promise<Response> => Promise.reject(new TypeError('fetch failed'));
    await expect(
      retrying(down, { retry: { maxTries: 2 }, timing: fakeTiming().timing })(get()),
    ).rejects.toThrow('fetch failed');
  });

  it('ends a try at its timeout, and retries it when the method is idempotent', async () => {
    // A server that answers the second try only; the first hangs until its signal aborts.
    const errors: unknown[] = [];
    let tries = 0;
    const send = (request: Request): Promise<Response> =>
      ++tries > 1
        ? Promise.resolve(new Response(null, { status: 200 }))
        : new Promise((_resolve, reject) => {
            request.signal.addEventListener('abort', () => {
              errors.push(request.signal.reason);
              reject(request.signal.reason as Error);
            });
          });
    const clock = fakeTiming();
    const response = await retrying(send, { retry: {}, timeoutMs: 20, timing: clock.timing })(
      get(),
    );
    expect(response.status).toBe(200);
    expect(errors).toEqual([expect.objectContaining({ name: 'TimeoutError' })]);

    tries = 0;
    const post = new Request('http://x/admin/v1/keys', { method: 'POST', body: '{}' });
    await expect(
      retrying(send, { retry: {}, timeoutMs: 20, timing: clock.timing })(post),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(tries).toBe(1);
  });

  it("stops at the caller's abort, during a wait or a try, and tries no more", async () => {
    const controller = new AbortController();
    const server = answering([429, 200], now);
    const waiting: Timing = {
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason as Error));
          controller.abort();
        }),
      random: () => 0,
    };
    const request = new Request('http://x', { signal: controller.signal });
    await expect(
      retrying(server.send, { retry: {}, timing: waiting })(request),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(server.methods).toEqual(['GET']);

    let tries = 0;
    const aborted = (r: Request): Promise<Response> => {
      tries++;
      r.signal.throwIfAborted();
      return Promise.resolve(new Response(null));
    };
    await expect(
      retrying(aborted, { retry: {}, timing: fakeTiming().timing })(request),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(tries).toBe(1);
  });

  it('never retries another 4xx, nor anything when off, nor a wait over maxWaitSeconds', async () => {
    const { timing } = fakeTiming();
    for (const status of [400, 401, 403, 404, 409, 500]) {
      const server = answering([status, 200], now);
      expect((await retrying(server.send, { retry: {}, timing })(get())).status).toBe(status);
    }
    const off = answering([429, 200], now);
    expect((await retrying(off.send, { retry: false, timing })(get())).status).toBe(429);
    const long = answering([429, 200], { 'Retry-After': '3600' });
    expect((await retrying(long.send, { retry: {}, timing })(get())).status).toBe(429);
    expect(long.methods).toHaveLength(1);
  });
});

describe('retryAfterSeconds', () => {
  it('reads seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2026-11-27T10:00:00Z');
    expect(retryAfterSeconds('17', now)).toBe(17);
    expect(retryAfterSeconds('Fri, 27 Nov 2026 10:00:30 GMT', now)).toBe(30);
    expect(retryAfterSeconds('Fri, 27 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds(null, now)).toBeUndefined();
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
  });
});

describe('parseExact', () => {
  it('reads int64 properties as exact strings, other numbers as numbers', () => {
    expect(
      parseExact('[{"id":9223372036854775807,"petId":7,"quantity":2,"note":{"id":"x"}}]'),
    ).toEqual([{ id: '9223372036854775807', petId: '7', quantity: 2, note: { id: 'x' } }]);
  });
});
