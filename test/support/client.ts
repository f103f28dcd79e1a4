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
 * Requests against a test app, as a client of the API would send them: with the app's test key,
 * unless `key` says otherwise (`null`: no Authorization header). Every e2e request goes through
 * here, so checks that hold for every response live in one place.
 */
export function api(t: TestApp, key: string | null = t.key) {
  const send = (method: Method, path: string): Test => {
    const req = request(t.http)[method](path);
    return key === null ? req : req.set('Authorization', `Bearer ${key}`);
  };
  return {
    get: (path: string) => send('get', path),
    delete: (path: string) => send('delete', path),
    send,
  };
}
