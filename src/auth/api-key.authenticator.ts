import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { hashApiKey, parseBearer } from './api-key';
import { ActiveKey, ApiKeyStore, isExpired } from './api-key.store';
import './request-auth';

/**
 * Keys resolved in the last few seconds, by hash, valid or not (`false`), so neither real traffic
 * nor a flood of bad keys reaches the database on every request. The time to live bounds how long
 * a revocation (or an unban) takes to reach every instance.
 */
export const KEY_CACHE_TTL_MS = 5_000;
const KEY_CACHE_MAX_ENTRIES = 50_000;

/**
 * `last_used_at` is written at most this often per key and instance: a busy key costs one UPDATE
 * a minute, never one per request (nor one per key cache period).
 */
export const LAST_USE_WRITE_INTERVAL_MS = 60_000;

/** Resolves `Authorization: Bearer <key>` to the key's id, plan and limits, without rejecting. */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly cache = new LRUCache<string, ActiveKey | false>({
    max: KEY_CACHE_MAX_ENTRIES,
    ttl: KEY_CACHE_TTL_MS,
    // Staleness read from the clock at each lookup, not from a clock cached by a new timer every
    // millisecond: the lookup is on every request.
    ttlResolution: 0,
  });

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
    const bearer = parseBearer(req.headers.authorization);
    if (bearer.kind !== 'token') {
      req.authFailure = bearer.kind === 'missing' ? 'missing' : 'invalid';
      return undefined;
    }
    const keyHash = hashApiKey(bearer.token);
    const cached = this.cache.get(keyHash);
    if (cached === undefined) return keyHash;
    this.settle(req, cached || undefined);
    return undefined;
  }

  private settle(req: Request, key: ActiveKey | undefined): void {
    if (!key) req.authFailure = 'invalid';
    // Checked on every use, not when cached: a key is refused from the moment it expires.
    else if (isExpired(key)) req.authFailure = 'expired';
    else req.auth = key;
  }

  private resolve(keyHash: string): Promise<ActiveKey | undefined> {
    const cached = this.cache.get(keyHash);
    if (cached !== undefined) return Promise.resolve(cached || undefined);
    let lookup = this.lookups.get(keyHash);
    if (!lookup) {
      lookup = this.lookUp(keyHash).finally(() => this.lookups.delete(keyHash));
      this.lookups.set(keyHash, lookup);
    }
    return lookup;
  }

  private async lookUp(keyHash: string): Promise<ActiveKey | undefined> {
    const key = await this.store.findActive(keyHash);
    this.cache.set(keyHash, key ?? false);
    if (key && !isExpired(key)) this.recordUse(key.keyId);
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
