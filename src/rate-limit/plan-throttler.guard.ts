import {
  CanActivate,
  ExecutionContext,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import {
  InjectThrottlerOptions,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
} from '@nestjs/throttler';
import { KeyLookupBudget } from './key-lookup-budget';
import { isPublic } from '../auth/public.decorator';
import { httpRequestOf, httpResponseOf } from '../common/http/http-context';
import { RouteTable } from '../common/http/route-table';
import { RateLimitService } from './rate-limit.service';
import { WindowSpec } from './rate-limit.storage';
import { RouteThrottle, RouteThrottles } from './route-throttle';

/**
 * First of the global guard chain: decides the request's key (`req.auth` or `req.authFailure`,
 * from the key cache, or within the budgets of lookups: `KeyLookupBudget`), then applies the
 * ThrottlerModule's named throttlers (minute, day; limits from the key's plan) together.
 *
 * Not the stock ThrottlerGuard: it checks them one after the other, so a request refused by the
 * day window would already have counted in the minute window; its headers (suffixed, reset in
 * seconds-until) and its exception body are not the API's.
 *
 * A route's own `@Throttle()` windows are counted with the plan's, in the same atomic step, and
 * `@SkipThrottle()` exempts a route from counting and from the headers (route-throttle.ts).
 */
@Injectable()
export class PlanThrottlerGuard implements CanActivate, OnApplicationBootstrap {
  private readonly throttlers: readonly ThrottlerOptions[];
  private readonly routeThrottles: RouteThrottles;

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    private readonly keyLookups: KeyLookupBudget,
    private readonly rateLimit: RateLimitService,
    private readonly routes: RouteTable,
  ) {
    this.throttlers = Array.isArray(options) ? options : options.throttlers;
    this.routeThrottles = new RouteThrottles(this.throttlers.map((t) => t.name ?? 'default'));
  }

  /** Every route's @Throttle() read at start: one the limiter cannot honour stops the start. */
  onApplicationBootstrap(): void {
    for (const route of this.routes.routes) {
      const methods = route.controller.prototype as Record<string, object>;
      this.routeThrottles.of(route.controller, methods[route.handler]);
    }
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = httpRequestOf(context);
    const route = this.routeThrottles.of(context.getClass(), context.getHandler());
    const publicRoute = isPublic(context);
    if (route.skipped || (publicRoute && route.windows.length === 0)) {
      this.rateLimit.exempt(req);
      // RequireApiKeyGuard needs the key decided: within the budgets of lookups, as always.
      if (!publicRoute) await this.keyLookups.decideKey(req);
      return true;
    }
    // The limits depend on the key: decide it first (a lookup only within the budgets).
    await this.keyLookups.decideKey(req);
    return this.count(context, route, publicRoute);
  }

  /**
   * The plan's windows (those the route does not skip) and the route's own; a public route's
   * own only, per key when it was sent one, else per IP.
   */
  private async count(
    context: ExecutionContext,
    route: RouteThrottle,
    publicRoute: boolean,
  ): Promise<boolean> {
    const windows: WindowSpec[] = [];
    for (const throttler of publicRoute ? [] : this.throttlers) {
      const name = throttler.name ?? 'default';
      if (route.skippedPlanWindows.has(name)) continue;
      windows.push({
        name,
        limit: await resolve(throttler.limit, context),
        ttlMs: await resolve(throttler.ttl, context),
      });
    }
    windows.push(...route.windows);
    const req = httpRequestOf(context);
    if (windows.length === 0) {
      // Every plan window skipped (`@SkipThrottle({ minute: true, day: true })`), none of its own.
      this.rateLimit.exempt(req);
      return true;
    }
    await this.rateLimit.enforceLimits(req, httpResponseOf(context), windows);
    return true;
  }
}

async function resolve(
  value: number | ((context: ExecutionContext) => number | Promise<number>),
  context: ExecutionContext,
): Promise<number> {
  return typeof value === 'function' ? value(context) : value;
}
