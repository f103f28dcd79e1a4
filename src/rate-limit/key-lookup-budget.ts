import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiKeyAuthenticator } from '../auth/api-key.authenticator';
import { KeyCache } from '../auth/key-cache';
import '../auth/request-auth';
import { Clock } from '../common/clock';
import { clientAddressOf } from './client-address';
import { FixedWindowCounter } from './fixed-window-counter';
import { BanPolicy, RATE_LIMIT_STORAGE, RateLimitStorage } from './rate-limit.storage';
import { windowsFor } from './rate-limit.windows';

/** Lookups of unknown keys are refused past their budget, never banned: the requests are. */
const NEVER_BAN: BanPolicy = { after: Number.MAX_SAFE_INTEGER, storeForMs: 0 };

/** Lookups of keys no key may have that one instance makes in a minute, from all addresses. */
export const INSTANCE_LOOKUPS_PER_MINUTE = 1_000;

/**
 * How many database lookups of keys no key may have (their hash is not in the key cache's set of
 * the keys' hashes) clients may cost. Each one is reserved before it is made, from two budgets:
 * the client address's own, counted in the rate-limit storage with the anonymous limits (60 a
 * minute, 1,000 a day; in Redis, across instances), and this instance's, all addresses together
 * ({@link INSTANCE_LOOKUPS_PER_MINUTE}, in process). Both are taken atomically, so requests in
 * flight at once cannot overspend them, and a reservation either budget refuses spends neither.
 *
 * Past either budget, a key is looked up only if a key may have its hash (the set, current as of
 * the request): a made-up key is refused unchecked (and counted against the address like any bad
 * key), a key issued before the request, seen by this instance or not, is looked up. So a flood
 * of made-up keys costs at most those budgets in lookups, whatever the number of addresses, and
 * never shuts a valid key out. A key whose hash is in the set reserves nothing.
 */
@Injectable()
export class KeyLookupBudget {
  private readonly instanceLookups = new FixedWindowCounter(INSTANCE_LOOKUPS_PER_MINUTE, 60_000);

  constructor(
    @Inject(RATE_LIMIT_STORAGE) private readonly storage: RateLimitStorage,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly keys: KeyCache,
    private readonly clock: Clock,
  ) {}

  /**
   * Decides the request's key (`req.auth` or `req.authFailure`), the database step included
   * within the budgets.
   */
  async decideKey(req: Request): Promise<void> {
    const keyHash = this.authenticator.authenticateFromCache(req);
    if (keyHash === undefined) return;
    if (this.keys.listsHash(keyHash) || (await this.reserveLookup(req))) {
      await this.authenticator.lookUpFor(req, keyHash);
      return;
    }
    await this.decidePastBudget(req, keyHash);
  }

  /**
   * Takes one lookup from this instance's budget and from the client address's, or from neither.
   * The instance's is in process and taken first: handing it back when the address's refuses is
   * exact, where the shared counters have no way to hand a unit back.
   */
  private async reserveLookup(req: Request): Promise<boolean> {
    const window = this.instanceLookups.take();
    if (window === undefined) return false;
    // Without a valid key yet, the windows are the anonymous ones.
    const tracker = `lookup:${clientAddressOf(req)}`;
    const result = await this.storage.hit(tracker, windowsFor(req), NEVER_BAN);
    if (result.outcome === 'admitted') return true;
    this.instanceLookups.giveBack(window);
    return false;
  }

  /**
   * Decides a key that may not cost a lookup (a budget is spent) without asking the database
   * whether it exists: a hash no key has is refused; one a key may have (issued before this
   * request, by any process) is looked up. Waits, when needed, until the set of hashes is current
   * as of now.
   */
  private async decidePastBudget(req: Request, keyHash: string): Promise<void> {
    let listed: boolean;
    try {
      listed = await this.keys.listsHashAsOf(keyHash, this.clock.monotonic());
    } catch (error) {
      req.authFailure = 'unavailable';
      throw error;
    }
    if (listed) await this.authenticator.lookUpFor(req, keyHash);
    else req.authFailure = 'invalid';
  }
}
