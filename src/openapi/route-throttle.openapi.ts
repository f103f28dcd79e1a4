import type { OpenAPIObject, OperationObject } from '@nestjs/swagger';
import type { ServedRoute } from '../common/http/route-table';
import { RATE_LIMIT_WINDOWS } from '../rate-limit/rate-limit.windows';
import { type RouteThrottle, RouteThrottles } from '../rate-limit/route-throttle';
import { RATE_LIMIT_HEADERS } from './api-responses.decorator';

const RATE_LIMIT_HEADER_NAMES = Object.keys(RATE_LIMIT_HEADERS).filter((name) =>
  name.startsWith('X-RateLimit-'),
);

const seconds = (ms: number): string => {
  const s = ms / 1000;
  return `${s.toLocaleString('en-US')} second${s === 1 ? '' : 's'}`;
};

/** Shows one route's @Throttle() windows, or its @SkipThrottle(), on its operation. */
function describeOperation(operation: OperationObject, throttle: RouteThrottle): void {
  if (throttle.skipped) {
    // Neither counted nor limited: no rate-limit headers, and no 429.
    Reflect.deleteProperty(operation.responses, '429');
    for (const response of Object.values(operation.responses)) {
      if (!response || '$ref' in response) continue;
      for (const name of RATE_LIMIT_HEADER_NAMES)
        Reflect.deleteProperty(response.headers ?? {}, name);
    }
    return;
  }
  if (throttle.windows.length === 0) return;
  const limits = throttle.windows
    .map((w) => `${w.limit.toLocaleString('en-US')} requests per ${seconds(w.ttlMs)}`)
    .join(' and ');
  Object.assign(operation, {
    'x-rate-limit': throttle.windows.map((w) => ({
      limit: w.limit,
      periodSeconds: w.ttlMs / 1000,
    })),
  });
  operation.description = [
    operation.description,
    `**Rate limit of its own:** at most ${limits} per key (per client IP without one), beside ` +
      "the plan's windows; the `X-RateLimit-*` headers show it when it binds most.",
  ]
    .filter((text) => text !== undefined && text !== '')
    .join('\n\n');
}

/**
 * Shows the routes' own limits (`@Throttle()`) and exemptions (`@SkipThrottle()`) in the
 * document of their version (its paths still with the version's prefix).
 */
export function describeRouteThrottles(
  document: OpenAPIObject,
  routes: readonly ServedRoute[],
  version: string,
): void {
  const throttles = new RouteThrottles(RATE_LIMIT_WINDOWS.map((w) => w.name));
  for (const route of routes) {
    if (route.version !== version) continue;
    const methods = route.controller.prototype as Record<string, object>;
    const throttle = throttles.of(route.controller, methods[route.handler]);
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const item = document.paths[path] as Record<string, OperationObject | undefined> | undefined;
    const operation = item?.[route.method.toLowerCase()];
    if (operation) describeOperation(operation, throttle);
  }
}
