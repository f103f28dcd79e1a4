import type { Request } from 'express';
import { METHODS } from 'node:http';

interface RouteLayer {
  match(path: string): unknown;
  route?: { methods: Record<string, boolean>; _methods(): string[] };
}

/**
 * The methods the application's routes accept on this request's path (empty for an unknown path).
 * Express has no 405 of its own: a known path with another method falls through to the
 * not-found handler, and this tells the two apart. Only runs on that error path.
 */
export function allowedMethods(req: Request): string[] {
  const stack = (req.app as unknown as { router?: { stack?: RouteLayer[] } }).router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    const route = layer.route;
    // Nest registers middleware applied to every method as a route for every method: it is not a
    // resource, and a real route that took every method would have answered.
    if (!route || Object.keys(route.methods).length >= METHODS.length) continue;
    if (layer.match(req.path)) {
      for (const method of route._methods()) methods.add(method.toUpperCase());
    }
  }
  return [...methods].sort();
}
