import type { PinoLogger } from 'nestjs-pino';
import type { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import type { NotificationListenerOptions } from '../database/notification-listener';
import type { ActiveKey, ApiKeysRepository } from './api-keys.repository';
import { KeyCache } from './key-cache';
import { authSettings } from './auth.settings';
import { KeyChangesFeed } from './key-changes.feed';

/** The options each feed gave its listener: the test plays the connection's part through them. */
const mockListeners: { options: NotificationListenerOptions; stop: jest.Mock }[] = [];

jest.mock('../database/notification-listener', () => ({
  listenerClientConfig: () => ({}),
  NotificationListener: function (options: NotificationListenerOptions) {
    const listener = { options, start: jest.fn(), stop: jest.fn(() => Promise.resolve()) };
    mockListeners.push(listener);
    return listener;
  },
}));

const KEY_HASH = 'a'.repeat(64);
/** The default settings: KEY_CACHE_TTL_MS 5 s. */
const settings = authSettings.read({});
const { KEY_CACHE_TTL_MS } = settings;

/** A key cache over a fake store, fed by a feed over a fake connection. */
function setUp() {
  mockListeners.length = 0;
  let lookups = 0;
  const store = {
    findActive: () => {
      lookups++;
      return Promise.resolve({
        keyId: 'k1',
        familyId: 'k1',
        scopes: ['*'],
      } as unknown as ActiveKey);
    },
    keyHashes: () => Promise.resolve([KEY_HASH]),
  } as unknown as ApiKeysRepository;
  const logger = { info: jest.fn(), warn: jest.fn(), debug: jest.fn() };
  const cache = new KeyCache(store, logger as unknown as PinoLogger, settings, new Clock());
  const feed = new KeyChangesFeed(
    { options: {} } as DataSource,
    cache,
    logger as unknown as PinoLogger,
    settings,
    new Clock(),
  );
  const { options, stop } = mockListeners[0];
  return { cache, feed, options, stop, logger, lookups: () => lookups };
}

/** The connection answers heartbeats every second for `ms`. */
function confirmFor(options: NotificationListenerOptions, ms: number): void {
  for (let elapsed = 0; elapsed < ms; elapsed += 1_000) {
    jest.advanceTimersByTime(1_000);
    options.onConfirmed(performance.now());
  }
}

describe('KeyChangesFeed and the trust of cached keys', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('keeps a cached key trusted past 5 s while it listens and confirms', async () => {
    const { cache, options, lookups } = setUp();
    options.onListening(performance.now());
    await cache.resolve(KEY_HASH);
    confirmFor(options, 3 * KEY_CACHE_TTL_MS);
    expect(cache.cached(KEY_HASH)?.keyId).toBe('k1');
    expect(lookups()).toBe(1);
  });

  it('drops a key whose change it announces', async () => {
    const { cache, options } = setUp();
    options.onListening(performance.now());
    await cache.resolve(KEY_HASH);
    options.onNotification(KEY_HASH);
    expect(cache.cached(KEY_HASH)).toBeUndefined();
  });

  it('trusts cached keys 5 s only once lost, and says so once', async () => {
    const { cache, options, logger } = setUp();
    options.onListening(performance.now());
    await cache.resolve(KEY_HASH);
    confirmFor(options, 2_000);
    options.onLost(new Error('connection terminated'));
    expect(cache.cached(KEY_HASH)?.keyId).toBe('k1');
    jest.advanceTimersByTime(KEY_CACHE_TTL_MS - 2_000);
    expect(cache.cached(KEY_HASH)).toBeUndefined();
    options.onAttemptFailed(new Error('refused'), 1);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.debug).toHaveBeenCalledTimes(1);
  });

  it('trusts keys cached before a loss 5 s only, even once it listens again', async () => {
    const { cache, options, logger } = setUp();
    options.onListening(performance.now());
    await cache.resolve(KEY_HASH);
    options.onLost(new Error('connection terminated'));
    options.onListening(performance.now());
    confirmFor(options, KEY_CACHE_TTL_MS);
    expect(cache.cached(KEY_HASH)).toBeUndefined();
    expect(logger.info.mock.calls.map(([message]) => message as string)).toEqual([
      'key changes feed listening: changes to keys reach this instance at once',
      'key changes feed is back: changes to keys reach this instance at once',
    ]);
  });

  it('stops the cache trusting it at shutdown, before closing its connection', async () => {
    const { cache, feed, options, stop } = setUp();
    options.onListening(performance.now());
    await cache.resolve(KEY_HASH);
    await feed.onApplicationShutdown();
    expect(stop).toHaveBeenCalled();
    jest.advanceTimersByTime(KEY_CACHE_TTL_MS);
    options.onConfirmed(performance.now());
    expect(cache.cached(KEY_HASH)).toBeUndefined();
  });
});
