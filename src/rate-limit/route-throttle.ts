import type { Type } from '@nestjs/common';
import { SkipThrottle, Throttle } from '@nestjs/throttler';
import { readRoute, type RouteDecorators, type RouteReading } from '../common/http/route-metadata';
import type { WindowSpec } from './rate-limit.storage';

/**
 * What a route's `@Throttle()` and `@SkipThrottle()` (`@nestjs/throttler`'s own decorators) ask
 * of the plan limiter.
 */
export interface RouteThrottle {
  /** `@SkipThrottle()`: neither counted nor given rate-limit headers. */
  skipped: boolean;
  /** The plan windows (`minute`, `day`) this route leaves out: `@SkipThrottle({ day: true })`. */
  skippedPlanWindows: ReadonlySet<string>;
  /**
   * The route's own windows (`@Throttle({ default: { limit, ttl } })`, ttl in ms), counted per
   * key (per IP when anonymous) beside the plan's, in the same storage, under a name of their own.
   */
  windows: readonly WindowSpec[];
}

const NOT_THROTTLED: RouteThrottle = {
  skipped: false,
  skippedPlanWindows: new Set(),
  windows: [],
};

/**
 * The metadata keys the decorators write, one per throttler name (`<prefix><name>`), learnt by
 * applying the public decorators to a probe class: the package exports no constant for them
 * (`THROTTLER_LIMIT` ... are internal to its `dist`). Should a release store them some other way,
 * the probe finds nothing and the application refuses to start, rather than ignoring the routes'
 * limits.
 */
function decoratorKeyPrefixes(): { limit: string; ttl: string; skip: string } {
  const NAME = 'probe';
  const LIMIT = 7_919;
  const TTL = 104_729;
  // eslint-disable-next-line @typescript-eslint/no-extraneous-class -- only carries the metadata
  class Probe {}
  Throttle({ [NAME]: { limit: LIMIT, ttl: TTL } })(Probe);
  SkipThrottle({ [NAME]: true })(Probe);
  const keys = Reflect.getOwnMetadataKeys(Probe).filter(
    (key): key is string => typeof key === 'string' && key.endsWith(NAME),
  );
  const prefixOf = (value: unknown, what: string): string => {
    const key = keys.find((k) => Reflect.getOwnMetadata(k, Probe) === value);
    if (key === undefined) {
      throw new Error(
        `@nestjs/throttler's @${what} no longer stores its options as metadata keyed by throttler name: see docs/upgrading.md`,
      );
    }
    return key.slice(0, -NAME.length);
  };
  return {
    limit: prefixOf(LIMIT, 'Throttle'),
    ttl: prefixOf(TTL, 'Throttle'),
    skip: prefixOf(true, 'SkipThrottle'),
  };
}

/**
 * The routes' throttle declarations, read once per route through the routes' one metadata cache
 * (common/http/route-metadata.ts). A declaration the limiter cannot honour throws:
 * PlanThrottlerGuard reads every route's at start, so it stops the application then. `blockDuration`, `getTracker` and `generateKey`
 * are not read: a route's window blocks until it resets, and counts per key (per IP without one).
 */
export class RouteThrottles {
  private readonly keys = decoratorKeyPrefixes();
  /** This limiter's reading of a route (its plan windows are part of it), cached per route. */
  private readonly reading: RouteReading<RouteThrottle> = (route) => this.read(route);

  /** @param planWindows the plan's window names (`minute`, `day`). */
  constructor(private readonly planWindows: readonly string[]) {}

  /** The declarations of a route: its controller and its handler (the method). */
  of(controller: Type, handler: object): RouteThrottle {
    return readRoute(this.reading, controller, handler);
  }

  private read(route: RouteDecorators): RouteThrottle {
    const name = `${route.controller.name}.${String((route.handler as { name?: unknown }).name)}`;
    const skippedNames = route
      .keysUnder(this.keys.skip)
      .filter((throttler) => route.get(this.keys.skip + throttler) === true);
    const throttled = [
      ...new Set([...route.keysUnder(this.keys.limit), ...route.keysUnder(this.keys.ttl)]),
    ];
    if (skippedNames.length === 0 && throttled.length === 0) return NOT_THROTTLED;

    const windows: WindowSpec[] = [];
    for (const throttler of throttled) {
      if (skippedNames.includes(throttler)) continue;
      if (this.planWindows.includes(throttler)) {
        throw new Error(
          `@Throttle on ${name} names the plan's ${throttler} window: a route sets a stricter limit of its own, e.g. @Throttle({ default: { limit, ttl } })`,
        );
      }
      const limit = route.get(this.keys.limit + throttler);
      const ttlMs = route.get(this.keys.ttl + throttler);
      if (!isPositiveInteger(limit) || !isPositiveInteger(ttlMs)) {
        throw new Error(
          `@Throttle on ${name}: ${throttler} needs a limit and a ttl (ms), both positive integers`,
        );
      }
      // One window per route and name, shared by every instance (the name is the key in Redis).
      windows.push({ name: `route:${name}:${throttler}`, limit, ttlMs });
    }
    return {
      skipped: skippedNames.includes('default'),
      skippedPlanWindows: new Set(skippedNames.filter((n) => this.planWindows.includes(n))),
      windows,
    };
  }
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
