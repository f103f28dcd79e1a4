import { applyDecorators, type ExecutionContext, SetMetadata, type Type } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';
import { perRoute, readRoute, type RouteDecorators } from '../common/http/route-metadata';

export const IS_PUBLIC = 'store-orders:is-public';

/**
 * Opts a route out of the global guard chain: no API key is required and no rate limit applies.
 * Every route is protected unless it says this, so a new route cannot forget authentication.
 * In the OpenAPI document the route then needs no security (`security: []`), overriding the
 * document's global bearer requirement.
 */
export const Public = (): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(IS_PUBLIC, true), SetMetadata(DECORATORS.API_SECURITY, []));

/** Whether a route (or its whole controller) says `@Public()`. */
const publicRoute = (route: RouteDecorators): boolean => route.get(IS_PUBLIC) === true;

/** Whether a handler of a controller (or the whole controller) is `@Public()`. */
export function isPublicRoute(handler: object, controller: Type): boolean {
  return readRoute(publicRoute, controller, handler);
}

/**
 * Whether the handling route is `@Public()`. Asked by each guard of every request, so the
 * metadata is read once per route.
 */
export const isPublic: (context: ExecutionContext) => boolean = perRoute(publicRoute);
