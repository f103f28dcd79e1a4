import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { hashApiKey, parseBearer } from './api-key';
import { ActiveKey, isExpired } from './api-keys.repository';
import { KeyCache } from './key-cache';
import { LastUseRecorder } from './last-use-recorder';
import './request-auth';

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
 * Resolves `Authorization: Bearer <key>` to the key's id, plan and limits, without rejecting:
 * sets `req.auth`, or `req.authFailure` with the reason there is no valid key. Keys come from the
 * {@link KeyCache} (so neither real traffic nor a flood of bad keys reaches the database on every
 * request); each use of a valid key is reported to the {@link LastUseRecorder}.
 */
@Injectable()
export class ApiKeyAuthenticator {
  /**
   * Each connection's last valid-looking Authorization header and its key's hash: see
   * `keyHashOf`. Held as long as the connection, like the request that carried it.
   */
  private readonly lastBearerOf = new WeakMap<object, { header: string; keyHash: string }>();

  constructor(
    private readonly keys: KeyCache,
    private readonly lastUse: LastUseRecorder,
  ) {}

  /** Sets `req.auth` (or `req.authFailure`) once per request; later calls are free. */
  async authenticate(req: Request): Promise<ActiveKey | undefined> {
    const keyHash = this.authenticateFromCache(req);
    if (keyHash === undefined) return req.auth;
    return this.lookUpFor(req, keyHash);
  }

  /**
   * The database step of `authenticate`, for a hash `authenticateFromCache` returned.
   * `KeyLookupBudget` decides first whether the client may cost a lookup at all.
   */
  async lookUpFor(req: Request, keyHash: string): Promise<ActiveKey | undefined> {
    let key: ActiveKey | undefined;
    try {
      key = await this.keys.resolve(keyHash);
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
    // A proxy and the service must never see different keys.
    if (header !== undefined && authorizationFields(req.rawHeaders) > 1) {
      req.authFailure = 'ambiguous';
      return undefined;
    }
    const keyHash = this.keyHashOf(req, header);
    if (keyHash === undefined) return undefined;
    const cached = this.keys.cached(keyHash);
    if (cached !== undefined) this.settle(req, cached);
    else if (this.keys.recentlyNotFound(keyHash)) req.authFailure = 'invalid';
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

  private settle(req: Request, key: ActiveKey | undefined): void {
    if (!key) req.authFailure = 'invalid';
    // Checked on every use, not when cached: a key is refused from the moment it expires.
    else if (isExpired(key)) req.authFailure = 'expired';
    else {
      req.auth = key;
      this.lastUse.used(key);
    }
  }
}
