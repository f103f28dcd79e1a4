import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { hashApiKey, parseBearer } from './api-key';
import { ActiveKey, ApiKeyStore } from './api-key.store';
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
   * always looked up again when its cache entry lapses, whatever its client's IP has sent (see
   * `RateLimitService.authenticate`), so an IP's anonymous ban never shuts out a real key.
   */
  private readonly known = new LRUCache<string, true>({ max: KEY_CACHE_MAX_ENTRIES });

  /**
   * Database lookups under way, by hash. When a key's cache entry lapses under load, the requests
   * that carry it at that moment wait for one lookup instead of each sending its own.
   */
  private readonly lookups = new Map<string, Promise<ActiveKey | undefined>>();

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
    return key;
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
    if (cached !== undefined) req.auth = cached;
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
    if (key) req.auth = key;
    else req.authFailure = 'invalid';
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
      // At most once per key per cache period and instance: cheap enough for "last used".
      this.store.touch(key.keyId).catch((err: unknown) => {
        this.logger.warn({ err, keyId: key.keyId }, 'could not record last use of key');
      });
    }
    return key ?? undefined;
  }
}
