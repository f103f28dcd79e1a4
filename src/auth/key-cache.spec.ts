import type { PinoLogger } from 'nestjs-pino';
import { Clock } from '../common/clock';
import type { ActiveKey, ApiKeysRepository } from './api-keys.repository';
import { KeyCache } from './key-cache';
import { authSettings } from './auth.settings';
import { KEY_CACHE_MAX_AGE_MS } from './key-cache-trust';

/** KEY_CACHE_TTL_MS's default: 5 s. */
const { KEY_CACHE_TTL_MS } = authSettings.read({});

const hashOf = (n: number): string => n.toString(16).padStart(64, '0');
const KEY_HASH = hashOf(1);
const OTHER_HASH = hashOf(2);

const activeKey = (keyId: string): ActiveKey =>
  ({
    keyId,
    familyId: keyId,
    scopes: ['*'],
    bannedUntil: null,
    expiresAt: null,
  }) as unknown as ActiveKey;

/** Lets the promises settled so far run their callbacks. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A cache over a fake store: `rows` is the table, each lookup is counted. */
function setUp() {
  const rows = new Map<string, ActiveKey>([[KEY_HASH, activeKey('k1')]]);
  const lookups: string[] = [];
  let answerLater: ((key: ActiveKey | null) => void) | undefined;
  let holdLookups = false;
  const store = {
    findActive: (hash: string): Promise<ActiveKey | null> => {
      lookups.push(hash);
      if (holdLookups) {
        return new Promise((resolve) => {
          answerLater = resolve;
        });
      }
      return Promise.resolve(rows.get(hash) ?? null);
    },
    keyHashes: (): Promise<string[]> => Promise.resolve([...rows.keys()]),
  } as unknown as ApiKeysRepository;
  const logger = { warn: jest.fn() } as unknown as PinoLogger;
  const cache = new KeyCache(store, logger, { KEY_CACHE_TTL_MS }, new Clock());
  return {
    cache,
    rows,
    lookups,
    /** Lookups from now on wait for `answer`. */
    hold: (): void => {
      holdLookups = true;
    },
    answer: (key: ActiveKey | null): void => answerLater?.(key),
  };
}

describe('KeyCache', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('looks a key up once, however many requests carry it at that moment', async () => {
    const { cache, lookups, hold, answer } = setUp();
    hold();
    const waiting = [cache.resolve(KEY_HASH), cache.resolve(KEY_HASH), cache.resolve(KEY_HASH)];
    answer(activeKey('k1'));
    const keys = await Promise.all(waiting);
    expect(keys.map((key) => key?.keyId)).toEqual(['k1', 'k1', 'k1']);
    expect(lookups).toEqual([KEY_HASH]);
  });

  it('uses a key from the cache for 5 s while the feed is down, then asks again', async () => {
    const { cache, lookups } = setUp();
    expect((await cache.resolve(KEY_HASH))?.keyId).toBe('k1');
    jest.advanceTimersByTime(KEY_CACHE_TTL_MS - 1);
    expect(cache.cached(KEY_HASH)?.keyId).toBe('k1');
    jest.advanceTimersByTime(1);
    expect(cache.cached(KEY_HASH)).toBeUndefined();
    await cache.resolve(KEY_HASH);
    expect(lookups).toEqual([KEY_HASH, KEY_HASH]);
  });

  it('uses it up to the long bound while the feed listens and confirms, no longer', async () => {
    const { cache } = setUp();
    cache.changesFeedListening(performance.now());
    await cache.resolve(KEY_HASH);
    for (let elapsed = 0; elapsed < KEY_CACHE_MAX_AGE_MS - 1_000; elapsed += 1_000) {
      jest.advanceTimersByTime(1_000);
      cache.changesFeedConfirmed(performance.now());
    }
    expect(cache.cached(KEY_HASH)?.keyId).toBe('k1');
    jest.advanceTimersByTime(1_000);
    cache.changesFeedConfirmed(performance.now());
    expect(cache.cached(KEY_HASH)).toBeUndefined();
  });

  it('stops trusting it past 5 s once the feed is lost, even when it listens again', async () => {
    const { cache } = setUp();
    cache.changesFeedListening(performance.now());
    await cache.resolve(KEY_HASH);
    cache.changesFeedLost();
    cache.changesFeedListening(performance.now());
    jest.advanceTimersByTime(KEY_CACHE_TTL_MS);
    cache.changesFeedConfirmed(performance.now());
    expect(cache.cached(KEY_HASH)).toBeUndefined();
  });

  it('stops trusting it past 5 s when the feed has not confirmed the last 5 s', async () => {
    const { cache } = setUp();
    cache.changesFeedListening(performance.now());
    await cache.resolve(KEY_HASH);
    jest.advanceTimersByTime(KEY_CACHE_TTL_MS);
    expect(cache.cached(KEY_HASH)).toBeUndefined();
  });

  it('drops a key the feed says changed, and asks the database at its next request', async () => {
    const { cache, rows, lookups } = setUp();
    cache.changesFeedListening(performance.now());
    await cache.resolve(KEY_HASH);
    rows.set(KEY_HASH, activeKey('k1-changed'));
    cache.keyChanged(KEY_HASH);
    expect(cache.cached(KEY_HASH)).toBeUndefined();
    expect((await cache.resolve(KEY_HASH))?.keyId).toBe('k1-changed');
    expect(lookups).toEqual([KEY_HASH, KEY_HASH]);
  });

  it('serves, but does not keep, an answer that may predate a change announced meanwhile', async () => {
    const { cache, hold, answer } = setUp();
    hold();
    const resolving = cache.resolve(KEY_HASH);
    cache.keyChanged(KEY_HASH);
    answer(activeKey('k1-before'));
    expect((await resolving)?.keyId).toBe('k1-before');
    expect(cache.cached(KEY_HASH)).toBeUndefined();
  });

  // Its 5 s bound is lru-cache's, on a clock it takes at load, out of reach of fake timers: the
  // e2e suites cover it (a key issued after a miss works).
  it('remembers that a hash is no key: its next requests cost no lookup', async () => {
    const { cache, lookups } = setUp();
    expect(await cache.resolve(OTHER_HASH)).toBeUndefined();
    expect(cache.recentlyNotFound(OTHER_HASH)).toBe(true);
    expect(await cache.resolve(OTHER_HASH)).toBeUndefined();
    expect(lookups).toEqual([OTHER_HASH]);
  });

  it('forgets that a hash is no key when the feed announces it', async () => {
    const { cache } = setUp();
    await cache.resolve(OTHER_HASH);
    cache.keyChanged(OTHER_HASH);
    expect(cache.recentlyNotFound(OTHER_HASH)).toBe(false);
    expect(cache.listsHash(OTHER_HASH)).toBe(true);
  });

  it('lists the hashes of the keys once loaded, and of the keys found since', async () => {
    const { cache, rows } = setUp();
    expect(cache.listsHash(KEY_HASH)).toBe(false);
    cache.onApplicationBootstrap();
    await settle();
    expect(cache.listsHash(KEY_HASH)).toBe(true);
    expect(cache.listsHash(OTHER_HASH)).toBe(false);
    rows.set(OTHER_HASH, activeKey('k2'));
    await cache.resolve(OTHER_HASH);
    expect(cache.listsHash(OTHER_HASH)).toBe(true);
    cache.onApplicationShutdown();
  });

  it('answers at once whether a hash is listed when the set is current as of the request', async () => {
    const { cache } = setUp();
    cache.changesFeedListening(performance.now());
    await settle();
    jest.advanceTimersByTime(1_000);
    cache.changesFeedConfirmed(performance.now());
    let answers: boolean[] | undefined;
    void Promise.all([
      cache.listsHashAsOf(KEY_HASH, performance.now() - 500),
      cache.listsHashAsOf(OTHER_HASH, performance.now() - 500),
    ]).then((both) => (answers = both));
    // At once: no load asked for, no heartbeat waited on, no timer advanced.
    await settle();
    expect(answers).toEqual([true, false]);
    cache.onApplicationShutdown();
  });
});
