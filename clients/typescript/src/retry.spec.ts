import { retryAfterSeconds } from './errors';
import { parseExact } from './exact-json';
import { retrying } from './retry';

/** A server stand-in answering `statuses` in turn, recording the methods it was sent. */
function answering(statuses: number[], headers: Record<string, string> = {}) {
  const methods: string[] = [];
  const send = (request: Request): Promise<Response> => {
    methods.push(request.method);
    return Promise.resolve(new Response(null, { status: statuses[methods.length - 1], headers }));
  };
  return { methods, send };
}

describe('retrying', () => {
  const now = { 'Retry-After': '0' };

  it('retries 429 for any method, at most maxTries tries in all', async () => {
    const server = answering([429, 429, 429, 200], now);
    const response = await retrying(server.send, { maxTries: 3 })(
      new Request('http://x/admin/v1/keys', { method: 'POST', body: '{}' }),
    );
    expect(response.status).toBe(429);
    expect(server.methods).toEqual(['POST', 'POST', 'POST']);
  });

  it('retries 503 of idempotent methods only', async () => {
    const del = answering([503, 204], now);
    expect(
      (await retrying(del.send, {})(new Request('http://x', { method: 'DELETE' }))).status,
    ).toBe(204);
    const post = answering([503, 201], now);
    const request = new Request('http://x', { method: 'POST', body: '{}' });
    expect((await retrying(post.send, {})(request)).status).toBe(503);
    expect(post.methods).toEqual(['POST']);
  });

  it('never retries another 4xx, nor anything when off, nor a wait over maxWaitSeconds', async () => {
    for (const status of [400, 401, 403, 404, 409, 500]) {
      const server = answering([status, 200], now);
      expect((await retrying(server.send, {})(new Request('http://x'))).status).toBe(status);
    }
    const off = answering([429, 200], now);
    expect((await retrying(off.send, false)(new Request('http://x'))).status).toBe(429);
    const long = answering([429, 200], { 'Retry-After': '3600' });
    expect((await retrying(long.send, {})(new Request('http://x'))).status).toBe(429);
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
