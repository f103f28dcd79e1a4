import type { ExecutionContext, Type } from '@nestjs/common';

/**
 * What a route's decorators say (the handler's own, else its controller's), as the guards ask it
 * on every request: read once per route, since metadata does not change at run time.
 */
export function perRoute<T>(
  read: (handler: object, controller: Type) => T,
): (context: ExecutionContext) => T {
  const byController = new WeakMap<object, WeakMap<object, T>>();
  return (context) => {
    const controller = context.getClass();
    const handler = context.getHandler();
    let byHandler = byController.get(controller);
    if (!byHandler) {
      byHandler = new WeakMap();
      byController.set(controller, byHandler);
    }
    let answer = byHandler.get(handler);
    if (answer === undefined && !byHandler.has(handler)) {
      answer = read(handler, controller);
      byHandler.set(handler, answer);
    }
    return answer as T;
  };
}

/** The value a metadata key has on the handler, else on its controller (the handler's wins). */
export function routeMetadata(key: string, handler: object, controller: Type): unknown {
  return Reflect.getMetadata(key, handler) ?? Reflect.getMetadata(key, controller);
}
