import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { hashApiKey, parseBearer } from './api-key';
import { ActiveKey, ApiKeyStore, isExpired } from './api-key.store';
import { CachedLookup, ChangesFeedState, isTrusted, KEY_CACHE_TTL_MS } from './key-cache-trust';
import { KnownKeyHashes } from './key-hashes';
import './request-auth';

const KEY_CACHE_MAX_ENTRIES = 50_000;
/**
 * Hashes found to be no valid key, kept apart from the valid ones: random keys fill (and evict
 * within) their own space, and can never push a valid key out of the cache.
 */
const UNKNOWN_KEY_CACHE_MAX_ENTRIES = 10_000;

/** A resolved key in the cache, with what decides whether it may still be used (`isTrusted`). */
interface CachedKey extends CachedLookup {
  key: ActiveKey;
  /** When its use is next to be written (ms since the epoch): see `recordUse`. */
  useDueAt: number;
}

/** A database lookup under way. */
interface PendingLookup extends CachedLookup {
  /** The key changed while it was under way: its answer may predate the change. */
  changed: boolean;
}

interface Lookup extends PendingLookup {
  result: Promise<ActiveKey | undefined>;
}

/** How many `Authorization` fields the request sent (Node keeps only the first in `headers`). */
function authorizationFields(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length === 13 && name.toLowerCase() === 'authorization') count++;
  }
  return count;
}

/**
 * `last_used_at` is written at most this often per key and instance: a busy key costs one UPDATE
 * a minute, never one per request (nor one per key cache period).
 */
export const LAST_USE_WRITE_INTERVAL_MS = 60_000;

/**
 * Resolves `Authorization: Bearer <key>` to the key's id, plan and limits, without rejecting.
 *
 * Resolved keys are cached by hash, so neither real traffic nor a flood of bad keys reaches the
 * database on every request. A cached key is used for {@link KEY_CACHE_TTL_MS}, and for up to
 * ten minutes while the key changes feed (`KeyChangesFeed`) is up: a change to a key arrives
 * from it and drops the key from the cache at once (`keyChanged`). See `isTrusted`.
 */
@Injectable()
export class ApiKeyAuthenticator implements OnApplicationBootstrap, OnApplicationShutdown {
  /**
   * No time to live of its own: `isTrusted` decides, from the entry and the feed, at each use.
   * Least recently used keys go first when it is full.
   */
  private readonly cache = new LRUCache<string, CachedKey>({ max: KEY_CACHE_MAX_ENTRIES });

  /** Never kept longer than {@link KEY_CACHE_TTL_MS}: a key issued later must work at once. */
  private readonly unknown = new LRUCache<string, true>({
    max: UNKNOWN_KEY_CACHE_MAX_ENTRIES,
    ttl: KEY_CACHE_TTL_MS,
    // Staleness read from the clock at each lookup, not from a clock cached by a new timer every
    // millisecond: the lookup is on every request.
    ttlResolution: 0,
  });

  /**
   * Database lookups under way, by hash. When a key's cache entry lapses under load, the requests
   * that carry it at that moment wait for one lookup instead of each sending its own.
   */
  private readonly lookups = new Map<string, Lookup>();

  /** When this instance last wrote each key's last use (ms since the epoch), by key id. */
  private readonly lastUseWritten = new LRUCache<string, number>({ max: KEY_CACHE_MAX_ENTRIES });

  /**
   * Each connection's last valid-looking Authorization header and its key's hash: see
   * `keyHashOf`. Held as long as the connection, like the request that carried it.
   */
  private readonly lastBearerOf = new WeakMap<object, { header: string; keyHash: string }>();

  /** Down until `KeyChangesFeed` says it listens. */
  private readonly feed: ChangesFeedState = {
    epoch: 0,
    listening: false,
    confirmedAt: -Infinity,
  };

  /**
   * The hashes of every key that may be valid: a key with another hash is none, which the rate
   * limiter decides without a lookup once the client is past its budget of lookups (see
   * `RateLimitService.authenticate`).
   */
  private readonly hashes: KnownKeyHashes;

  constructor(
    private readonly store: ApiKeyStore,
    @InjectPinoLogger(ApiKeyAuthenticator.name) private readonly logger: PinoLogger,
  ) {
    this.hashes = new KnownKeyHashes(
      () => store.keyHashes(),
      this.feed,
      (err: unknown) => {
        logger.warn({ err }, 'could not load the hashes of the keys: tried again when needed');
      },
    );
  }

  /** Loads the keys' hashes in the background: the service starts as it would without them. */
  onApplicationBootstrap(): void {
    void this.hashes.load();
  }

  onApplicationShutdown(): void {
    this.hashes.stop();
  }

  /** Sets `req.auth` (or `req.authFailure`) once per request; later calls are free. */
  async authenticate(req: Request): Promise<ActiveKey | undefined> {
    const keyHash = this.authenticateFromCache(req);
    if (keyHash === undefined) return req.auth;
    return this.lookUpFor(req, keyHash);
  }

  /**
   * The database step of `authenticate`, for a hash `authenticateFromCache` returned. The rate
   * limiter decides first whether the client may cost a lookup at all.
   */
  async lookUpFor(req: Request, keyHash: string): Promise<ActiveKey | undefined> {
    let key: ActiveKey | undefined;
    try {
      key = await this.resolve(keyHash);
    } catch (error) {
      // Remembered, so the error path does not ask the unavailable database a second time.
      req.authFailure = 'unavailable';
      throw error;
    }
    this.settle(req, key);
    return req.auth;
  }

  /**
   * What `authenticate` does when it needs no database: the request's key is decided (`req.auth`
   * or `req.authFailure` set) from the header and the cache alone. Returns the key's hash when
   * the database must be asked (by `authenticate`), else `undefined`. The hot path of every
   * request: synchronous, so the guard that calls it costs no promise.
   */
  authenticateFromCache(req: Request): string | undefined {
    if (req.auth !== undefined || req.authFailure !== undefined) return undefined;
    const header = req.headers.authorization;
    // A proxy and the service must never see different keys (contract §2).
    if (header !== undefined && authorizationFields(req.rawHeaders) > 1) {
      req.authFailure = 'ambiguous';
      return undefined;
    }
    const keyHash = this.keyHashOf(req, header);
    if (keyHash === undefined) return undefined;
    const cached = this.trusted(keyHash);
    if (cached !== undefined) {
      this.settle(req, cached.key);
      // A key that stays cached is still recorded as used, about once a minute.
      if (Date.now() >= cached.useDueAt && !isExpired(cached.key)) this.recordUse(cached);
    } else if (this.unknown.get(keyHash)) req.authFailure = 'invalid';
    else return keyHash;
    return undefined;
  }

  /**
   * The hash of the request's bearer key; undefined, with `req.authFailure` set, when there is
   * none or it is malformed. A client on a kept-alive connection sends the same header with every
   * request: its parse and SHA-256 are kept with the connection (until it closes), so only the
   * first request of a connection, or one with another key, computes them.
   */
  private keyHashOf(req: Request, header: string | undefined): string | undefined {
    // Requests made in process (tests, `light-my-request`) may have no socket.
    const socket = req.socket as object | undefined;
    const last = socket && this.lastBearerOf.get(socket);
    if (last !== undefined && last.header === header) return last.keyHash;
    const bearer = parseBearer(header);
    if (bearer.kind !== 'token') {
      req.authFailure = bearer.kind === 'missing' ? 'missing' : 'invalid';
      return undefined;
    }
    const keyHash = hashApiKey(bearer.token);
    if (socket) this.lastBearerOf.set(socket, { header: header as string, keyHash });
    return keyHash;
  }

  /**
   * Whether a key may have this hash (it is in the set of the keys' hashes): then it is looked up
   * whatever its client's IP has spent of its budget of unknown-key lookups.
   */
  isKnownKey(keyHash: string): boolean {
    return this.hashes.has(keyHash);
  }

  /**
   * Decides a key whose client may not cost a lookup (it is past its budget) without asking the
   * database whether it exists: a hash no key has is refused; one a key may have (issued before
   * this request, by any process) is looked up. Waits, when needed, until the set of hashes is
   * current as of now (see `KnownKeyHashes.contains`).
   */
  decideUnknown(req: Request, keyHash: string): void | Promise<void> {
    const known = this.hashes.contains(keyHash, performance.now());
    if (known === false) {
      req.authFailure = 'invalid';
      return;
    }
    if (known === true) return this.lookUpFor(req, keyHash).then(() => undefined);
    return known.then(
      (mayBe) => {
        if (!mayBe) req.authFailure = 'invalid';
        else return this.lookUpFor(req, keyHash).then(() => undefined);
      },
      (error: unknown) => {
        req.authFailure = 'unavailable';
        throw error;
      },
    );
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

  /** The cached entry of this hash, if it may still be used; an entry that may not is dropped. */
  private trusted(keyHash: string): CachedKey | undefined {
    const cached = this.cache.get(keyHash);
    if (cached === undefined || isTrusted(cached, this.feed, performance.now())) return cached;
    this.cache.delete(keyHash);
    return undefined;
  }

  private settle(req: Request, key: ActiveKey | undefined): void {
    if (!key) req.authFailure = 'invalid';
    // Checked on every use, not when cached: a key is refused from the moment it expires.
    else if (isExpired(key)) req.authFailure = 'expired';
    else req.auth = key;
  }

  private resolve(keyHash: string): Promise<ActiveKey | undefined> {
    const cached = this.trusted(keyHash);
    if (cached !== undefined) return Promise.resolve(cached.key);
    if (this.unknown.get(keyHash)) return Promise.resolve(undefined);
    return (this.lookups.get(keyHash) ?? this.startLookUp(keyHash)).result;
  }

  private startLookUp(keyHash: string): Lookup {
    // Taken before the database is asked: a change that commits later is either in the answer or
    // announced after this (while the lookup is under way, or once its answer is cached).
    const pending: PendingLookup = {
      lookedUpAt: performance.now(),
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
    const cached: CachedKey = { key, lookedUpAt, epoch, useDueAt: 0 };
    if (keep) this.cache.set(keyHash, cached);
    this.hashes.found(keyHash);
    if (!isExpired(key)) this.recordUse(cached);
    return key;
  }

  /**
   * Called when a key is looked up, and when a cached key is used past its `useDueAt`: writes its
   * last use unless this instance did within the last minute.
   */
  private recordUse(cached: CachedKey): void {
    const { keyId } = cached.key;
    const now = Date.now();
    const written = this.lastUseWritten.get(keyId);
    if (written !== undefined && now - written < LAST_USE_WRITE_INTERVAL_MS) {
      cached.useDueAt = written + LAST_USE_WRITE_INTERVAL_MS;
      return;
    }
    this.lastUseWritten.set(keyId, now);
    cached.useDueAt = now + LAST_USE_WRITE_INTERVAL_MS;
    this.store.touch(keyId).catch((err: unknown) => {
      this.logger.warn({ err, keyId }, 'could not record last use of key');
    });
  }
}
