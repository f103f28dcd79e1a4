import type { Request } from 'express';
import type { PinoLogger } from 'nestjs-pino';
import { generateApiKey, hashApiKey } from './api-key';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { KEY } from './api-key.fixture';
import type { ActiveKey, ApiKeysRepository } from './api-keys.repository';
import { authSettings } from './auth.settings';
import { KeyCache } from './key-cache';
import { LastUseRecorder } from './last-use-recorder';
import { Clock } from '../common/clock';

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
    keyHashes: jest.fn(() => Promise.resolve([])),
  };
  return { store, waiting };
}

const requestWith = (token: string): Request =>
  ({
    headers: { authorization: `Bearer ${token}` },
    rawHeaders: ['Host', 'localhost', 'Authorization', `Bearer ${token}`],
  }) as Request;

const logger = { warn: jest.fn() } as unknown as PinoLogger;

/** The authenticator, with its key cache and last-use recorder, over this store. */
function authenticatorOn(store: object) {
  const keyStore = store as ApiKeysRepository;
  const keys = new KeyCache(keyStore, logger, authSettings.read({}), new Clock());
  const authenticator = new ApiKeyAuthenticator(
    keys,
    new LastUseRecorder(keyStore, new Clock(), logger),
  );
  return { authenticator, keys };
}

/** An authenticator whose store knows one valid key (returned), and no other. */
function knowingOneKey() {
  const valid = generateApiKey();
  const store = {
    findActive: jest.fn((hash: string) =>
      Promise.resolve(hash === hashApiKey(valid) ? KEY : undefined),
    ),
    touch: jest.fn(() => Promise.resolve()),
    keyHashes: jest.fn(() => Promise.resolve([])),
  };
  return { valid, store, ...authenticatorOn(store) };
}

describe('ApiKeyAuthenticator, its KeyCache and LastUseRecorder', () => {
  it('decides each request on one connection by its own header, whatever the one before sent', async () => {
    const { valid, authenticator } = knowingOneKey();
    const socket = {};
    const onConnection = (authorization: string | undefined): Request =>
      ({
        socket,
        headers: authorization === undefined ? {} : { authorization },
        rawHeaders: authorization === undefined ? [] : ['Authorization', authorization],
      }) as unknown as Request;

    const decided: (string | undefined)[] = [];
    for (const header of [
      `Bearer ${valid}`,
      `Bearer ${valid}`,
      `Bearer ${generateApiKey()}`,
      `Bearer ${valid}`,
      'Bearer not a key',
      undefined,
      `Bearer ${valid}`,
    ]) {
      const req = onConnection(header);
      await authenticator.authenticate(req);
      decided.push(req.auth ? 'valid' : req.authFailure);
    }
    expect(decided).toEqual(['valid', 'valid', 'invalid', 'valid', 'invalid', 'missing', 'valid']);
  });

  it('asks the database once for concurrent requests with the same uncached key', async () => {
    const { store, waiting } = pendingStore();
    const { authenticator } = authenticatorOn(store);
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
    const { authenticator } = authenticatorOn(store);
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
    // The caches' clock stands still: what is tested is eviction, not the 5 s lifetime (60,000
    // lookups can take longer than that on a loaded machine).
    const clock = jest.spyOn(performance, 'now').mockReturnValue(performance.now());
    const { valid, store, authenticator } = knowingOneKey();
    await authenticator.authenticate(requestWith(valid));
    // More unknown keys than either cache holds.
    for (let i = 0; i < 60_000; i++) await authenticator.authenticate(requestWith(`sk_${i}`));

    const later = requestWith(valid);
    expect(authenticator.authenticateFromCache(later)).toBeUndefined();
    expect(later.auth).toBe(KEY);
    expect(store.findActive).toHaveBeenCalledTimes(60_001);
    clock.mockRestore();
  });

  it('does not keep the answer of a lookup during which the key was announced as changed', async () => {
    const { store, waiting } = pendingStore();
    const { authenticator, keys } = authenticatorOn(store);
    keys.changesFeedListening(performance.now());
    const token = generateApiKey();
    const first = requestWith(token);
    const answer = authenticator.authenticate(first);
    // Revoked after the lookup read the row, announced before its answer arrived.
    keys.keyChanged(hashApiKey(token));
    waiting[0].resolve(KEY);
    expect(await answer).toBe(KEY);

    const next = requestWith(token);
    expect(authenticator.authenticateFromCache(next)).toBe(hashApiKey(token));
    const again = authenticator.authenticate(next);
    expect(store.findActive).toHaveBeenCalledTimes(2);
    waiting[1].resolve(undefined);
    expect(await again).toBeUndefined();
    expect(next.authFailure).toBe('invalid');
  });

  it('refuses more than one Authorization header, whatever they say, without a lookup', () => {
    const store = { findActive: jest.fn(), touch: jest.fn(), keyHashes: jest.fn() };
    const { authenticator } = authenticatorOn(store);
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
    const { valid, authenticator, keys } = knowingOneKey();
    const unknown = generateApiKey();
    expect(keys.listsHash(hashApiKey(valid))).toBe(false);
    await authenticator.authenticate(requestWith(valid));
    await authenticator.authenticate(requestWith(unknown));
    expect(keys.listsHash(hashApiKey(valid))).toBe(true);
    expect(keys.listsHash(hashApiKey(unknown))).toBe(false);
  });

  describe('with a clock', () => {
    beforeEach(() => jest.useFakeTimers({ now: Date.UTC(2026, 10, 23, 12) }));
    afterEach(() => jest.useRealTimers());

    /** A store that answers at once with the given key. */
    const storeOf = (key: ActiveKey) => ({
      findActive: jest.fn(() => Promise.resolve(key)),
      touch: jest.fn(() => Promise.resolve()),
      keyHashes: jest.fn(() => Promise.resolve([])),
    });

    it('refuses a cached key from the moment it expires, without asking the database', async () => {
      const key = { ...KEY, expiresAt: new Date(Date.now() + 2_000) };
      const store = storeOf(key);
      const { authenticator } = authenticatorOn(store);
      const token = generateApiKey();
      expect(await authenticator.authenticate(requestWith(token))).toBe(key);

      jest.setSystemTime(Date.now() + 1_999);
      const before = requestWith(token);
      authenticator.authenticateFromCache(before);
      expect(before.auth).toBe(key);

      jest.setSystemTime(Date.now() + 1);
      const after = requestWith(token);
      expect(authenticator.authenticateFromCache(after)).toBeUndefined();
      expect(after.auth).toBeUndefined();
      expect(after.authFailure).toBe('expired');
      expect(store.findActive).toHaveBeenCalledTimes(1);
    });

    it('writes last use at most once a minute per key, however often the cache lapses', async () => {
      const store = storeOf(KEY);
      const { authenticator } = authenticatorOn(store);
      // A lookup every 5 seconds for 2 minutes, as when its cache entry lapses (a new token each
      // time, so the lookup happens whatever the cache's own clock).
      for (let s = 0; s < 120; s += 5) {
        jest.setSystemTime(Date.UTC(2026, 10, 23, 12) + s * 1_000);
        await authenticator.authenticate(requestWith(generateApiKey()));
      }
      expect(store.findActive).toHaveBeenCalledTimes(24);
      expect(store.touch).toHaveBeenCalledTimes(2);
    });

    /** Confirms the feed (as its heartbeat does) every second for `ms`. */
    const heartbeatsFor = (keys: KeyCache, ms: number): void => {
      for (let t = 0; t < ms; t += 1_000) {
        jest.advanceTimersByTime(1_000);
        keys.changesFeedConfirmed(performance.now());
      }
    };

    /** A key looked up (and cached) while the feed listens. */
    const cachedWhileFeedListens = async () => {
      const store = storeOf(KEY);
      const { authenticator, keys } = authenticatorOn(store);
      keys.changesFeedListening(performance.now());
      const token = generateApiKey();
      await authenticator.authenticate(requestWith(token));
      return { store, authenticator, keys, token };
    };

    it('keeps a key cached past 5 s while the feed listens, until a change to it is announced', async () => {
      const { store, authenticator, keys, token } = await cachedWhileFeedListens();

      heartbeatsFor(keys, 9 * 60_000);
      const later = requestWith(token);
      expect(authenticator.authenticateFromCache(later)).toBeUndefined();
      expect(later.auth).toBe(KEY);
      expect(store.findActive).toHaveBeenCalledTimes(1);

      keys.keyChanged(hashApiKey(token));
      expect(authenticator.authenticateFromCache(requestWith(token))).toBe(hashApiKey(token));
    });

    it('asks the database again 5 s after a lookup when the feed is down, or was lost since', async () => {
      const store = storeOf(KEY);
      const { authenticator, keys } = authenticatorOn(store);
      const [down, lost] = [generateApiKey(), generateApiKey()];
      await authenticator.authenticate(requestWith(down));
      keys.changesFeedListening(performance.now());
      await authenticator.authenticate(requestWith(lost));
      keys.changesFeedLost();
      keys.changesFeedListening(performance.now());

      heartbeatsFor(keys, 4_000);
      for (const token of [down, lost]) {
        expect(authenticator.authenticateFromCache(requestWith(token))).toBeUndefined();
      }
      heartbeatsFor(keys, 1_000);
      for (const token of [down, lost]) {
        expect(authenticator.authenticateFromCache(requestWith(token))).toBe(hashApiKey(token));
      }
    });

    it('asks the database again 5 s after a lookup when the feed stops confirming', async () => {
      const { authenticator, keys, token } = await cachedWhileFeedListens();
      heartbeatsFor(keys, 30_000);
      expect(authenticator.authenticateFromCache(requestWith(token))).toBeUndefined();

      // No heartbeat answered for 5 s: a change may have gone unannounced.
      jest.advanceTimersByTime(5_000);
      expect(authenticator.authenticateFromCache(requestWith(token))).toBe(hashApiKey(token));
    });

    it('writes last use about once a minute for a key that stays cached', async () => {
      const { store, authenticator, keys, token } = await cachedWhileFeedListens();
      // Used every second for two and a half minutes.
      for (let s = 0; s < 150; s++) {
        heartbeatsFor(keys, 1_000);
        expect(authenticator.authenticateFromCache(requestWith(token))).toBeUndefined();
      }
      expect(store.findActive).toHaveBeenCalledTimes(1);
      // At the lookup, then 60 and 120 s later.
      expect(store.touch).toHaveBeenCalledTimes(3);
    });

    it('never writes last use for an expired key', async () => {
      const store = storeOf({ ...KEY, expiresAt: new Date(Date.now() - 1) });
      const { authenticator } = authenticatorOn(store);
      const req = requestWith(generateApiKey());
      expect(await authenticator.authenticate(req)).toBeUndefined();
      expect(req.authFailure).toBe('expired');
      expect(store.touch).not.toHaveBeenCalled();
    });
  });
});
