import type { Request } from 'express';
import type { PinoLogger } from 'nestjs-pino';
import { generateApiKey, hashApiKey } from './api-key';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import type { ActiveKey, ApiKeyStore } from './api-key.store';

const KEY: ActiveKey = {
  keyId: '7',
  plan: 'pro',
  limits: { perMinute: 300, perDay: 10_000 },
  bannedUntil: null,
};

/** A store whose lookups stay pending until the test settles them. */
function pendingStore() {
  const waiting: { resolve: (key: ActiveKey | undefined) => void; reject: (e: Error) => void }[] =
    [];
  const store = {
    findActive: jest.fn(
      () =>
        new Promise<ActiveKey | undefined>((resolve, reject) => waiting.push({ resolve, reject })),
    ),
    touch: jest.fn(() => Promise.resolve()),
  };
  return { store, waiting };
}

const requestWith = (token: string): Request =>
  ({
    headers: { authorization: `Bearer ${token}` },
    rawHeaders: ['Host', 'localhost', 'Authorization', `Bearer ${token}`],
  }) as Request;

describe('ApiKeyAuthenticator', () => {
  const logger = { warn: jest.fn() } as unknown as PinoLogger;

  it('asks the database once for concurrent requests with the same uncached key', async () => {
    const { store, waiting } = pendingStore();
    const authenticator = new ApiKeyAuthenticator(store as unknown as ApiKeyStore, logger);
    const token = generateApiKey();
    const requests = Array.from({ length: 5 }, () => requestWith(token));

    const answers = Promise.all(requests.map((req) => authenticator.authenticate(req)));
    expect(store.findActive).toHaveBeenCalledTimes(1);
    waiting[0].resolve(KEY);

    expect(await answers).toEqual(requests.map(() => KEY));
    expect(requests.map((req) => req.auth)).toEqual(requests.map(() => KEY));
    expect(store.touch).toHaveBeenCalledTimes(1);
    // Cached now: decided without the database.
    const later = requestWith(token);
    expect(authenticator.authenticateFromCache(later)).toBeUndefined();
    expect(later.auth).toBe(KEY);
    expect(store.findActive).toHaveBeenCalledTimes(1);
  });

  it('fails every waiting request when the lookup fails, and asks again afterwards', async () => {
    const { store, waiting } = pendingStore();
    const authenticator = new ApiKeyAuthenticator(store as unknown as ApiKeyStore, logger);
    const token = generateApiKey();
    const requests = [requestWith(token), requestWith(token)];

    const answers = requests.map((req) => authenticator.authenticate(req));
    waiting[0].reject(new Error('database down'));
    for (const answer of answers) await expect(answer).rejects.toThrow('database down');
    expect(requests.map((req) => req.authFailure)).toEqual(['unavailable', 'unavailable']);

    const retry = requestWith(token);
    const answer = authenticator.authenticate(retry);
    expect(store.findActive).toHaveBeenCalledTimes(2);
    waiting[1].resolve(undefined);
    expect(await answer).toBeUndefined();
    expect(retry.authFailure).toBe('invalid');
  });

  it('keeps valid keys cached while a flood of unknown keys comes and goes', async () => {
    const valid = generateApiKey();
    const store = {
      findActive: jest.fn((hash: string) =>
        Promise.resolve(hash === hashApiKey(valid) ? KEY : undefined),
      ),
      touch: jest.fn(() => Promise.resolve()),
    };
    // The caches' clock stands still: what is tested is eviction, not the 5 s lifetime (60,000
    // lookups can take longer than that on a loaded machine).
    const clock = jest.spyOn(performance, 'now').mockReturnValue(performance.now());
    const authenticator = new ApiKeyAuthenticator(store as unknown as ApiKeyStore, logger);
    await authenticator.authenticate(requestWith(valid));
    // More unknown keys than either cache holds.
    for (let i = 0; i < 60_000; i++) await authenticator.authenticate(requestWith(`sk_${i}`));

    const later = requestWith(valid);
    expect(authenticator.authenticateFromCache(later)).toBeUndefined();
    expect(later.auth).toBe(KEY);
    expect(store.findActive).toHaveBeenCalledTimes(60_001);
    clock.mockRestore();
  });

  it('refuses more than one Authorization header, whatever they say, without a lookup', () => {
    const store = { findActive: jest.fn(), touch: jest.fn() };
    const authenticator = new ApiKeyAuthenticator(store as unknown as ApiKeyStore, logger);
    const key = generateApiKey();
    const req = {
      headers: { authorization: `Bearer ${key}` },
      rawHeaders: ['authorization', `Bearer ${key}`, 'AUTHORIZATION', 'Bearer other'],
    } as Request;
    expect(authenticator.authenticateFromCache(req)).toBeUndefined();
    expect(req.authFailure).toBe('ambiguous');
    expect(req.auth).toBeUndefined();
    expect(store.findActive).not.toHaveBeenCalled();
  });

  it('remembers which keys were found valid, and only those', async () => {
    const valid = generateApiKey();
    const store = {
      findActive: jest.fn((hash: string) =>
        Promise.resolve(hash === hashApiKey(valid) ? KEY : undefined),
      ),
      touch: jest.fn(() => Promise.resolve()),
    };
    const authenticator = new ApiKeyAuthenticator(store as unknown as ApiKeyStore, logger);
    const unknown = generateApiKey();
    expect(authenticator.isKnownKey(hashApiKey(valid))).toBe(false);
    await authenticator.authenticate(requestWith(valid));
    await authenticator.authenticate(requestWith(unknown));
    expect(authenticator.isKnownKey(hashApiKey(valid))).toBe(true);
    expect(authenticator.isKnownKey(hashApiKey(unknown))).toBe(false);
  });
});
