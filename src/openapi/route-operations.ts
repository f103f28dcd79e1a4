import type { OpenAPIObject, OperationObject } from '@nestjs/swagger';
import type { ServedRoute } from '../common/http/route-table';

/**
 * The routes of one version with their operation in its document (its paths still with the
 * version's prefix), handler included: for what the decorators of a route add to its operation.
 */
export function routeOperations(
  document: OpenAPIObject,
  routes: readonly ServedRoute[],
  /** Undefined: the routes outside every version. */
  version: string | undefined,
): { route: ServedRoute; handler: object; operation: OperationObject }[] {
  return routes.flatMap((route) => {
    if (route.version !== version) return [];
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const item = document.paths[path] as Record<string, OperationObject | undefined> | undefined;
    const operation = item?.[route.method.toLowerCase()];
    const handler = (route.controller.prototype as Record<string, object>)[route.handler];
    return operation ? [{ route, handler, operation }] : [];
  });
}
