import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { hashApiKey, parseBearer } from './api-key';
import { ActiveKey, ApiKeyStore, isExpired } from './api-key.store';
import './request-auth';

/**
 * Keys resolved in the last few seconds, by hash, so neither real traffic nor a flood of bad keys
 * reaches the database on every request. The time to live bounds how long a revocation (or an
 * unban) takes to reach every instance.
 */
export const KEY_CACHE_TTL_MS = 5_000;
const KEY_CACHE_MAX_ENTRIES = 50_000;
/**
 * Hashes found to be no valid key, kept apart from the valid ones: random keys fill (and evict
 * within) their own space, and can never push a valid key out of the cache.
 */
const UNKNOWN_KEY_CACHE_MAX_ENTRIES = 10_000;

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

/** Resolves `Authorization: Bearer <key>` to the key's id, plan and limits, without rejecting. */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly cache = new LRUCache<string, ActiveKey>({
    max: KEY_CACHE_MAX_ENTRIES,
    ttl: KEY_CACHE_TTL_MS,
    // Staleness read from the clock at each lookup, not from a clock cached by a new timer every
    // millisecond: the lookup is on every request.
    ttlResolution: 0,
  });

  private readonly unknown = new LRUCache<string, true>({
    max: UNKNOWN_KEY_CACHE_MAX_ENTRIES,
    ttl: KEY_CACHE_TTL_MS,
    ttlResolution: 0,
  });

  /**
   * Hashes found valid at some point, without expiry (bounded like the key cache): such a key is
   * always looked up again when its cache entry lapses, whatever its client's IP has spent of its
   * budget of unknown-key lookups (see `RateLimitService.authenticate`).
   */
  private readonly known = new LRUCache<string, true>({ max: KEY_CACHE_MAX_ENTRIES });

  /**
   * Database lookups under way, by hash. When a key's cache entry lapses under load, the requests
   * that carry it at that moment wait for one lookup instead of each sending its own.
   */
  private readonly lookups = new Map<string, Promise<ActiveKey | undefined>>();

  /** When this instance last wrote each key's last use (ms since the epoch), by key id. */
  private readonly lastUseWritten = new LRUCache<string, number>({ max: KEY_CACHE_MAX_ENTRIES });

  constructor(
    private readonly store: ApiKeyStore,
    @InjectPinoLogger(ApiKeyAuthenticator.name) private readonly logger: PinoLogger,
  ) {}

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
    const bearer = parseBearer(header);
    if (bearer.kind !== 'token') {
      req.authFailure = bearer.kind === 'missing' ? 'missing' : 'invalid';
      return undefined;
    }
    const keyHash = hashApiKey(bearer.token);
    const cached = this.cache.get(keyHash);
    if (cached !== undefined) this.settle(req, cached);
    else if (this.unknown.get(keyHash)) req.authFailure = 'invalid';
    else return keyHash;
    return undefined;
  }

  /** Whether this hash was a valid key when last looked up (its cache entry may have lapsed). */
  isKnownKey(keyHash: string): boolean {
    return this.known.has(keyHash);
  }

  /** Decides a key that may not be looked up (its client is over its budget): not valid. */
  refuseUnchecked(req: Request): void {
    req.authFailure = 'invalid';
  }

  private settle(req: Request, key: ActiveKey | undefined): void {
    if (!key) req.authFailure = 'invalid';
    // Checked on every use, not when cached: a key is refused from the moment it expires.
    else if (isExpired(key)) req.authFailure = 'expired';
    else req.auth = key;
  }

  private resolve(keyHash: string): Promise<ActiveKey | undefined> {
    const cached = this.cache.get(keyHash);
    if (cached !== undefined || this.unknown.get(keyHash)) return Promise.resolve(cached);
    let lookup = this.lookups.get(keyHash);
    if (!lookup) {
      lookup = this.lookUp(keyHash).finally(() => this.lookups.delete(keyHash));
      this.lookups.set(keyHash, lookup);
    }
    return lookup;
  }

  private async lookUp(keyHash: string): Promise<ActiveKey | undefined> {
    const key = await this.store.findActive(keyHash);
    if (!key) {
      this.unknown.set(keyHash, true);
      this.known.delete(keyHash);
    } else {
      this.cache.set(keyHash, key);
      this.known.set(keyHash, true);
      if (!isExpired(key)) this.recordUse(key.keyId);
    }
    return key ?? undefined;
  }

  /**
   * Called when a key is looked up (at most once per cache period): writes its last use unless
   * this instance did within the last minute.
   */
  private recordUse(keyId: string): void {
    const now = Date.now();
    const written = this.lastUseWritten.get(keyId);
    if (written !== undefined && now - written < LAST_USE_WRITE_INTERVAL_MS) return;
    this.lastUseWritten.set(keyId, now);
    this.store.touch(keyId).catch((err: unknown) => {
      this.logger.warn({ err, keyId }, 'could not record last use of key');
    });
  }
}
