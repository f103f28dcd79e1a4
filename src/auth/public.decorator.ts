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

/** Whether the handling route (or its controller) is `@Public()`. */
export function isPublic(reflector: Reflector, context: ExecutionContext): boolean {
  return (
    reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]) === true
  );
}
