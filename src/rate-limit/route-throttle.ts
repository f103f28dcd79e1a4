import type { Type } from '@nestjs/common';
import { SkipThrottle, Throttle } from '@nestjs/throttler';
import type { WindowSpec } from './rate-limit.storage';

/**
 * What a route's `@Throttle()` and `@SkipThrottle()` (`@nestjs/throttler`'s own decorators) ask
 * of the plan limiter (contract §8).
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

/** Throttler names that carry metadata under this prefix, on the handler or its controller. */
function namesUnder(prefix: string, targets: object[]): string[] {
  const names = targets.flatMap((target) =>
    Reflect.getMetadataKeys(target)
      .filter((key): key is string => typeof key === 'string' && key.startsWith(prefix))
      .map((key) => key.slice(prefix.length)),
  );
  return [...new Set(names)];
}

/** The handler's own metadata, else its controller's (as the stock ThrottlerGuard reads them). */
function ownOrControllers(key: string, handler: object, controller: object): unknown {
  const own: unknown = Reflect.getMetadata(key, handler);
  return own !== undefined ? own : (Reflect.getMetadata(key, controller) as unknown);
}

/**
 * The routes' throttle declarations, read once per handler (metadata does not change at run
 * time). A declaration the limiter cannot honour throws: PlanThrottlerGuard reads every route's
 * at start, so it stops the application then. `blockDuration`, `getTracker` and `generateKey`
 * are not read: a route's window blocks until it resets, and counts per key (per IP without one).
 */
export class RouteThrottles {
  private readonly keys = decoratorKeyPrefixes();
  private readonly byHandler = new WeakMap<object, RouteThrottle>();

  /** @param planWindows the plan's window names (`minute`, `day`). */
  constructor(private readonly planWindows: readonly string[]) {}

  /** The declarations of a route: its controller and its handler (the method). */
  of(controller: Type, handler: object): RouteThrottle {
    let throttle = this.byHandler.get(handler);
    if (!throttle) {
      throttle = this.read(controller, handler);
      this.byHandler.set(handler, throttle);
    }
    return throttle;
  }

  private read(controller: Type, handler: object): RouteThrottle {
    const targets = [handler, controller];
    const route = `${controller.name}.${String((handler as { name?: unknown }).name)}`;
    const skippedNames = namesUnder(this.keys.skip, targets).filter(
      (name) => ownOrControllers(this.keys.skip + name, handler, controller) === true,
    );
    const throttled = [
      ...new Set([...namesUnder(this.keys.limit, targets), ...namesUnder(this.keys.ttl, targets)]),
    ];
    if (skippedNames.length === 0 && throttled.length === 0) return NOT_THROTTLED;

    const windows: WindowSpec[] = [];
    for (const name of throttled) {
      if (skippedNames.includes(name)) continue;
      if (this.planWindows.includes(name)) {
        throw new Error(
          `@Throttle on ${route} names the plan's ${name} window: a route sets a stricter limit of its own, e.g. @Throttle({ default: { limit, ttl } })`,
        );
      }
      const limit = ownOrControllers(this.keys.limit + name, handler, controller);
      const ttlMs = ownOrControllers(this.keys.ttl + name, handler, controller);
      if (!isPositiveInteger(limit) || !isPositiveInteger(ttlMs)) {
        throw new Error(
          `@Throttle on ${route}: ${name} needs a limit and a ttl (ms), both positive integers`,
        );
      }
      // One window per route and name, shared by every instance (the name is the key in Redis).
      windows.push({ name: `route:${route}:${name}`, limit, ttlMs });
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
