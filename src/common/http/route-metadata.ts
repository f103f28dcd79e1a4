import type { ExecutionContext, Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

/** Nest's public reader of decorator metadata; it keeps no state, so one serves every route. */
const reflector = new Reflector();

/** What the decorators of one route say: those of its handler (the method), else its controller's. */
export class RouteDecorators {
  constructor(
    readonly handler: object,
    readonly controller: Type,
  ) {}

  /** The value a metadata key has on the handler, else on its controller (the handler's wins). */
  get(key: string): unknown {
    return reflector.getAllAndOverride<unknown>(key, [
      this.handler as () => unknown,
      this.controller,
    ]);
  }

  /**
   * What follows `prefix` in the metadata keys of the handler and its controller, once each: for
   * decorators that write one key per name (`@nestjs/throttler`'s, one per throttler). The
   * Reflector lists no keys: reflect-metadata's own `getMetadataKeys` does.
   */
  keysUnder(prefix: string): string[] {
    const names = [this.handler, this.controller].flatMap((target) =>
      Reflect.getMetadataKeys(target)
        .filter((key): key is string => typeof key === 'string' && key.startsWith(prefix))
        .map((key) => key.slice(prefix.length)),
    );
    return [...new Set(names)];
  }
}

/** Something worked out from a route's decorators: read once per route, as they never change. */
export type RouteReading<T> = (route: RouteDecorators) => T;

/**
 * The one cache of what the routes' decorators say, for every reading (public, scope, throttle
 * ...): by controller (a handler inherited by two controllers reads each one's), then handler,
 * then reading. Weak throughout, so a reading or a controller dropped takes its entries along.
 */
const readings = new WeakMap<object, WeakMap<object, WeakMap<RouteReading<unknown>, unknown>>>();

/**
 * What `reading` makes of a route's decorators, worked out on the first call for that route and
 * remembered. A reading that throws is not remembered: it throws again on the next call.
 */
export function readRoute<T>(reading: RouteReading<T>, controller: Type, handler: object): T {
  let byHandler = readings.get(controller);
  if (!byHandler) {
    byHandler = new WeakMap();
    readings.set(controller, byHandler);
  }
  let byReading = byHandler.get(handler);
  if (!byReading) {
    byReading = new WeakMap();
    byHandler.set(handler, byReading);
  }
  if (byReading.has(reading)) return byReading.get(reading) as T;
  const answer = reading(new RouteDecorators(handler, controller));
  byReading.set(reading, answer);
  return answer;
}

/** {@link readRoute} for the route handling a request, as the guards ask it on every request. */
export function perRoute<T>(reading: RouteReading<T>): (context: ExecutionContext) => T {
  return (context) => readRoute(reading, context.getClass(), context.getHandler());
}
