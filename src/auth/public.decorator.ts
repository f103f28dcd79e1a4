import { applyDecorators, ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DECORATORS } from '@nestjs/swagger';

export const IS_PUBLIC = 'store-orders:is-public';

/**
 * Opts a route out of the global guard chain: no API key is required and no rate limit applies.
 * Every route is protected unless it says this, so a new route cannot forget authentication.
 * In the OpenAPI document the route then needs no security (`security: []`), overriding the
 * document's global bearer requirement.
 */
export const Public = (): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(IS_PUBLIC, true), SetMetadata(DECORATORS.API_SECURITY, []));

/** Answers of {@link isPublic} by controller and handler: metadata does not change at run time. */
const publicRoutes = new WeakMap<object, WeakMap<object, boolean>>();

/**
 * Whether the handling route (or its controller) is `@Public()`. Asked by each guard of every
 * request, so the metadata is read once per route.
 */
export function isPublic(reflector: Reflector, context: ExecutionContext): boolean {
  const controller = context.getClass();
  const handler = context.getHandler();
  let byHandler = publicRoutes.get(controller);
  if (!byHandler) {
    byHandler = new WeakMap();
    publicRoutes.set(controller, byHandler);
  }
  let answer = byHandler.get(handler);
  if (answer === undefined) {
    answer =
      reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [handler, controller]) === true;
    byHandler.set(handler, answer);
  }
  return answer;
}
