import request from 'supertest';
import type { Test } from 'supertest';
import type { TestApp } from './test-app';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options' | 'head';

/** The three keys of every error body, and nothing else. */
export function expectErrorBody(
  res: { body: unknown; headers: Record<string, unknown> },
  status: number,
  code: string,
): void {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({ code, message: expect.any(String), status });
  expect((res.body as { message: string }).message.length).toBeGreaterThan(0);
}

/**
 * Every response under /v1 and /v2, errors included, says where its binding rate-limit window stands:
 * integer limit and remaining, and a reset time in Unix seconds that is not in the past.
 */
export function expectRateLimitHeaders(res: { headers: Record<string, string> }): void {
  const limit = res.headers['x-ratelimit-limit'];
  const remaining = res.headers['x-ratelimit-remaining'];
  const reset = res.headers['x-ratelimit-reset'];
  expect({ limit, remaining, reset }).toEqual({
    limit: expect.stringMatching(/^[1-9][0-9]*$/),
    remaining: expect.stringMatching(/^[0-9]+$/),
    reset: expect.stringMatching(/^[0-9]+$/),
  });
  expect(Number(remaining)).toBeLessThanOrEqual(Number(limit));
  expect(Number(reset)).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
  expect(Number(reset)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 86_400);
}

/**
 * Requests against a test app, as a client of the API would send them: with the app's test key,
 * unless `key` says otherwise (`null`: no Authorization header). Every e2e request goes through
 * here, so checks that hold for every response live in one place: the rate-limit headers, and
 * the OpenAPI document the app serves (status documented, body and headers as documented).
 */
export function api(t: TestApp, key: string | null = t.key) {
  const send = (method: Method, path: string): Test => {
    const req = request(t.http)[method](path);
    if (/^\/v[12]\//.test(path)) req.expect(expectRateLimitHeaders);
    req.expect((res) => {
      t.contract.check(method, path, res);
    });
    return key === null ? req : req.set('Authorization', `Bearer ${key}`);
  };
  return {
    get: (path: string) => send('get', path),
    delete: (path: string) => send('delete', path),
    send,
  };
}
