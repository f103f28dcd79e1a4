import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { clientAddressOf } from '../rate-limit/client-address';
import {
  BanPolicy,
  RATE_LIMIT_STORAGE,
  RateLimitStorage,
  WindowState,
} from '../rate-limit/rate-limit.storage';
import { windowsFor } from '../rate-limit/rate-limit.windows';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { KeyCache } from './key-cache';
import './request-auth';

/** Lookups of unknown keys are refused past their budget, never banned: the requests are. */
const NEVER_BAN: BanPolicy = { after: Number.MAX_SAFE_INTEGER, storeForMs: 0 };

/**
 * How many database lookups of keys a client may cost. Each lookup that finds no key costs the
 * client IP one unit of a budget of its own, counted in the rate-limit storage with the anonymous
 * limits (60 a minute, 1,000 a day). Past it, a key is looked up only if a key may have its hash
 * (the key cache's set of the keys' hashes, current as of the request): a made-up key is refused
 * unchecked (and counted against the IP like any bad key), a key issued before the request, seen
 * by this instance or not, is looked up. So a flood of made-up keys costs at most that budget in
 * lookups, even from a banned IP, and never shuts a valid key out; the IP's own 429s or ban, a
 * database outage and real keys spend none of it.
 */
@Injectable()
export class KeyLookupBudget {
  constructor(
    @Inject(RATE_LIMIT_STORAGE) private readonly storage: RateLimitStorage,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly keys: KeyCache,
  ) {}

  /**
   * Decides the request's key (`req.auth` or `req.authFailure`), the database step included
   * within the client's budget. Synchronous for a cached key.
   */
  decideKey(req: Request): void | Promise<void> {
    const keyHash = this.authenticator.authenticateFromCache(req);
    if (keyHash === undefined) return;
    if (this.keys.isKnownKey(keyHash)) return this.lookUp(req, keyHash);
    // Without a valid key yet, the windows are the anonymous ones.
    const tracker = `lookup:${clientAddressOf(req)}`;
    const windows = windowsFor(req);
    const decide = (states: WindowState[]): void | Promise<void> => {
      if (states.some((w) => w.count >= w.limit)) return this.decidePastBudget(req, keyHash);
      return this.lookUp(req, keyHash).then(async () => {
        if (req.authFailure === 'invalid') await this.storage.hit(tracker, windows, NEVER_BAN);
      });
    };
    const states = this.storage.peek(tracker, windows);
    return states instanceof Promise ? states.then(decide) : decide(states);
  }

  /**
   * Decides a key whose client may not cost a lookup (it is past its budget) without asking the
   * database whether it exists: a hash no key has is refused; one a key may have (issued before
   * this request, by any process) is looked up. Waits, when needed, until the set of hashes is
   * current as of now.
   */
  private decidePastBudget(req: Request, keyHash: string): void | Promise<void> {
    const known = this.keys.mayBeKey(keyHash, performance.now());
    if (known === false) {
      req.authFailure = 'invalid';
      return;
    }
    if (known === true) return this.lookUp(req, keyHash);
    return known.then(
      (mayBe) => {
        if (!mayBe) req.authFailure = 'invalid';
        else return this.lookUp(req, keyHash);
      },
      (error: unknown) => {
        req.authFailure = 'unavailable';
        throw error;
      },
    );
  }

  private lookUp(req: Request, keyHash: string): Promise<void> {
    return this.authenticator.lookUpFor(req, keyHash).then(() => undefined);
  }
}
