import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { ActiveKey } from './api-key.store';

/** The request's API key (`{keyId, plan, limits}`), in a handler of a protected route. */
export const ApiKeyAuth = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ActiveKey | undefined =>
    context.switchToHttp().getRequest<Request>().auth,
);
