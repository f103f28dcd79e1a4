import type { Request } from 'express';
import { routeOf, UNMATCHED_ROUTE } from './route-of';

const req = (route: unknown, baseUrl = ''): Request => ({ route, baseUrl }) as unknown as Request;

describe('routeOf', () => {
  it('gives the matched route pattern, not the raw path', () => {
    expect(routeOf(req({ path: '/v1/store/orders/:orderId' }))).toBe('/v1/store/orders/:orderId');
    expect(routeOf(req({ path: '/orders' }, '/v1'))).toBe('/v1/orders');
  });

  it('groups requests that matched no endpoint under one label', () => {
    expect(routeOf(req(undefined))).toBe(UNMATCHED_ROUTE);
    // Nest's not-found handler is a catch-all route.
    expect(routeOf(req({ path: '{/*splat}' }))).toBe(UNMATCHED_ROUTE);
  });
});
