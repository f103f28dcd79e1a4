import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import {
  InjectThrottlerOptions,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
} from '@nestjs/throttler';
import { KeyLookupBudget } from '../auth/key-lookup-budget';
import { isPublic } from '../auth/public.decorator';
import { httpRequestOf, httpResponseOf } from '../common/http/http-context';
import { RateLimitService } from './rate-limit.service';
import { WindowSpec } from './rate-limit.storage';

/**
 * First of the global guard chain: decides the request's key (`req.auth` or `req.authFailure`,
 * from the key cache, or within the client IP's budget of lookups), then applies the
 * ThrottlerModule's named throttlers (minute, day; limits from the key's plan) together.
 *
 * Not the stock ThrottlerGuard: it checks them one after the other, so a request refused by the
 * day window would already have counted in the minute window; its headers (suffixed, reset in
 * seconds-until) and its exception body are not the contract's; and it returns a promise on every
 * request.
 */
@Injectable()
export class PlanThrottlerGuard implements CanActivate {
  private readonly throttlers: readonly ThrottlerOptions[];

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    private readonly keyLookups: KeyLookupBudget,
    private readonly rateLimit: RateLimitService,
  ) {
    this.throttlers = Array.isArray(options) ? options : options.throttlers;
  }

  /** Synchronous while the key is cached and the storage is: no promise on every request. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (isPublic(context)) {
      this.rateLimit.exempt(httpRequestOf(context));
      return true;
    }
    // The limits depend on the key: decide it first (a lookup only within the IP's budget).
    const decided = this.keyLookups.decideKey(httpRequestOf(context));
    return decided instanceof Promise
      ? decided.then(() => this.count(context))
      : this.count(context);
  }

  private count(context: ExecutionContext): boolean | Promise<boolean> {
    const windows: WindowSpec[] = [];
    let pending: Promise<void>[] | undefined;
    for (const throttler of this.throttlers) {
      const spec: WindowSpec = { name: throttler.name ?? 'default', limit: 0, ttlMs: 0 };
      windows.push(spec);
      const limit = resolve(throttler.limit, context);
      const ttlMs = resolve(throttler.ttl, context);
      if (typeof limit === 'number' && typeof ttlMs === 'number') {
        spec.limit = limit;
        spec.ttlMs = ttlMs;
      } else {
        const resolved = Promise.all([limit, ttlMs]).then(([l, t]) => {
          spec.limit = l;
          spec.ttlMs = t;
        });
        (pending ??= []).push(resolved);
      }
    }
    return pending
      ? Promise.all(pending).then(() => this.enforce(context, windows))
      : this.enforce(context, windows);
  }

  private enforce(context: ExecutionContext, windows: WindowSpec[]): boolean | Promise<boolean> {
    const req = httpRequestOf(context);
    const counted = this.rateLimit.enforceLimits(req, httpResponseOf(context), windows);
    return counted instanceof Promise ? counted.then(() => true) : true;
  }
}

function resolve(
  value: number | ((context: ExecutionContext) => number | Promise<number>),
  context: ExecutionContext,
): number | Promise<number> {
  return typeof value === 'function' ? value(context) : value;
}
