import type { Request } from 'express';

/** Label for requests that matched no route: raw paths would make metrics unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The route pattern a request matched, e.g. `/v1/store/orders/:orderId`: what logs and metrics
 * group by. Read once the response is done (Express sets `req.route` while routing). A wildcard
 * route is a catch-all (Nest's not-found handler is `{/*splat}`), not an endpoint.
 */
export function routeOf(req: Request): string {
  const route = (req as { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' && !route.path.includes('*')
    ? `${req.baseUrl}${route.path}`
    : UNMATCHED_ROUTE;
}
