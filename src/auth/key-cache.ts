import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { Clock } from '../common/clock';
import { ActiveKey, ApiKeysRepository } from './api-keys.repository';
import { type AuthSettings, authSettings } from './auth.settings';
import { CachedLookup, ChangesFeedState, isTrusted } from './key-cache-trust';
import { KnownKeyHashes } from './key-hashes';

export const KEY_CACHE_MAX_ENTRIES = 50_000;
/**
 * Hashes found to be no valid key, kept apart from the valid ones: random keys fill (and evict
 * within) their own space, and can never push a valid key out of the cache.
 */
const UNKNOWN_KEY_CACHE_MAX_ENTRIES = 10_000;

/** A resolved key in the cache, with what decides whether it may still be used (`isTrusted`). */
interface CachedKey extends CachedLookup {
  key: ActiveKey;
}

/** A database lookup under way. */
interface PendingLookup extends CachedLookup {
  /** The key changed while it was under way: its answer may predate the change. */
  changed: boolean;
}

interface Lookup extends PendingLookup {
  result: Promise<ActiveKey | undefined>;
}

/**
 * What this instance knows of the keys, by hash: the keys found valid, the hashes found to be no
 * key, and the set of the hashes a key may have (`KnownKeyHashes`). Filled from the database,
 * one lookup per hash at a time; kept current by the key changes feed (`KeyChangesFeed`).
 *
 * A cached key is used for KEY_CACHE_TTL_MS (5 s by default), and for up to ten minutes while
 * the feed is up: a change to a key arrives from it and drops the key at once (`keyChanged`). See `isTrusted`.
 */
@Injectable()
export class KeyCache implements OnApplicationBootstrap, OnApplicationShutdown {
  /**
   * No time to live of its own: `isTrusted` decides, from the entry and the feed, at each use.
   * Least recently used keys go first when it is full.
   */
  private readonly cache = new LRUCache<string, CachedKey>({ max: KEY_CACHE_MAX_ENTRIES });

  /** Never kept longer than KEY_CACHE_TTL_MS: a key issued later must work at once. */
  private readonly unknown: LRUCache<string, true>;

  /**
   * Database lookups under way, by hash. When a key's cache entry lapses under load, the requests
   * that carry it at that moment wait for one lookup instead of each sending its own.
   */
  private readonly lookups = new Map<string, Lookup>();

  /** Down until `KeyChangesFeed` says it listens. */
  private readonly feed: ChangesFeedState = {
    epoch: 0,
    listening: false,
    confirmedAt: -Infinity,
  };

  /**
   * The hashes of every key that may be valid: a key with another hash is none, which
   * `KeyLookupBudget` decides without a lookup once a budget of lookups is spent.
   */
  private readonly hashes: KnownKeyHashes;

  /** KEY_CACHE_TTL_MS: see `isTrusted`. */
  private readonly ttlMs: number;

  constructor(
    private readonly store: ApiKeysRepository,
    @InjectPinoLogger(KeyCache.name) logger: PinoLogger,
    @Inject(authSettings.KEY) { KEY_CACHE_TTL_MS }: AuthSettings,
    private readonly clock: Clock,
  ) {
    this.ttlMs = KEY_CACHE_TTL_MS;
    this.unknown = new LRUCache<string, true>({
      max: UNKNOWN_KEY_CACHE_MAX_ENTRIES,
      ttl: KEY_CACHE_TTL_MS,
      // Staleness read from the clock at each lookup, not from a clock cached by a new timer every
      // millisecond: the lookup is on every request.
      ttlResolution: 0,
    });
    this.hashes = new KnownKeyHashes(
      () => store.keyHashes(),
      this.feed,
      KEY_CACHE_TTL_MS,
      (err: unknown) => {
        logger.warn({ err }, 'could not load the hashes of the keys: tried again when needed');
      },
      () => clock.monotonic(),
    );
  }

  /** Loads the keys' hashes in the background: the service starts as it would without them. */
  onApplicationBootstrap(): void {
    void this.hashes.load();
  }

  onApplicationShutdown(): void {
    this.hashes.stop();
  }

  /** The cached key of this hash, if it may still be used; an entry that may not is dropped. */
  cached(keyHash: string): ActiveKey | undefined {
    const cached = this.cache.get(keyHash);
    if (cached === undefined) return undefined;
    if (isTrusted(cached, this.feed, this.clock.monotonic(), this.ttlMs)) return cached.key;
    this.cache.delete(keyHash);
    return undefined;
  }

  /** Whether a lookup of this hash found no key within the last KEY_CACHE_TTL_MS. */
  recentlyNotFound(keyHash: string): boolean {
    return this.unknown.get(keyHash) === true;
  }

  /** The key of this hash: from the cache, else from the database (one lookup per hash at once). */
  resolve(keyHash: string): Promise<ActiveKey | undefined> {
    const cached = this.cached(keyHash);
    if (cached !== undefined) return Promise.resolve(cached);
    if (this.recentlyNotFound(keyHash)) return Promise.resolve(undefined);
    return (this.lookups.get(keyHash) ?? this.startLookUp(keyHash)).result;
  }

  /**
   * Whether the set of the keys' hashes lists this hash as it stands, without waiting: a key may
   * have it. Then it is looked up whatever the budgets of lookups of other keys have left, and
   * spends nothing of them.
   */
  listsHash(keyHash: string): boolean {
    return this.hashes.has(keyHash);
  }

  /**
   * Whether the set of the keys' hashes lists this hash once it is current as of `now`
   * (`Clock.monotonic()`), bringing the set up to date first when it must (see
   * `KnownKeyHashes.contains`).
   */
  listsHashAsOf(keyHash: string, now: number): Promise<boolean> {
    return this.hashes.contains(keyHash, now);
  }

  /**
   * The key with this hash changed in the database (the feed said so): forget what this instance
   * knows of it, and of any lookup of it under way, so that its next request asks the database.
   */
  keyChanged(keyHash: string): void {
    this.hashes.announced(keyHash);
    this.cache.delete(keyHash);
    this.unknown.delete(keyHash);
    const lookup = this.lookups.get(keyHash);
    if (lookup) lookup.changed = true;
  }

  /** The feed listens (again) and will report every change committed from `since` on. */
  changesFeedListening(since: number): void {
    this.feed.epoch++;
    this.feed.listening = true;
    this.feed.confirmedAt = since;
    this.hashes.feedListening();
  }

  /** The feed has reported every change committed before `at`. */
  changesFeedConfirmed(at: number): void {
    this.feed.confirmedAt = at;
    this.hashes.feedConfirmed();
  }

  /** The feed is down: changes may be missed until it listens again. */
  changesFeedLost(): void {
    this.feed.epoch++;
    this.feed.listening = false;
    this.hashes.feedLost();
  }

  private startLookUp(keyHash: string): Lookup {
    // Taken before the database is asked: a change that commits later is either in the answer or
    // announced after this (while the lookup is under way, or once its answer is cached).
    const pending: PendingLookup = {
      lookedUpAt: this.clock.monotonic(),
      epoch: this.feed.epoch,
      changed: false,
    };
    const result = this.lookUp(keyHash, pending).finally(() => this.lookups.delete(keyHash));
    const lookup = Object.assign(pending, { result });
    this.lookups.set(keyHash, lookup);
    return lookup;
  }

  private async lookUp(keyHash: string, pending: PendingLookup): Promise<ActiveKey | undefined> {
    const key = (await this.store.findActive(keyHash)) ?? undefined;
    // A key announced as changed meanwhile: the answer serves the requests that waited for it,
    // but is not kept.
    const keep = !pending.changed;
    if (!key) {
      if (keep) this.unknown.set(keyHash, true);
      // No key has it now, and an announcement that one does would have reached the feed.
      if (keep && pending.epoch === this.feed.epoch && this.feed.listening) {
        this.hashes.notFound(keyHash);
      }
      return undefined;
    }
    const { lookedUpAt, epoch } = pending;
    if (keep) this.cache.set(keyHash, { key, lookedUpAt, epoch });
    this.hashes.found(keyHash);
    return key;
  }
}
