import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiException } from '../common/errors/api.exception';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { AuthErrors } from './auth.errors';
import { isPublic } from './public.decorator';

export const WWW_AUTHENTICATE = 'Bearer realm="store-orders"';

const CHALLENGES: Record<NonNullable<Request['authFailure']>, string> = {
  missing: WWW_AUTHENTICATE,
  unavailable: WWW_AUTHENTICATE,
  invalid: `${WWW_AUTHENTICATE}, error="invalid_token"`,
  expired: `${WWW_AUTHENTICATE}, error="invalid_token", error_description="The access token expired"`,
};

/**
 * The 401 of the contract: with `error="invalid_token"` when a key was presented, and the
 * description RFC 6750 §3 gives as its example when that key has expired.
 */
export function unauthorized(req: Request): ApiException {
  const challenge = CHALLENGES[req.authFailure ?? 'missing'];
  return new ApiException(AuthErrors.UNAUTHORIZED, undefined, { 'WWW-Authenticate': challenge });
}

/**
 * First of the global guard chain: resolves the request's key (`req.auth`) without rejecting it,
 * so the rate limiter that runs next can count a request with a bad key too.
 */
@Injectable()
export class AuthenticateGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (isPublic(this.reflector, context)) return true;
    const req = context.switchToHttp().getRequest<Request>();
    // A key seen in the last seconds (nearly every request) is decided without a promise.
    if (this.authenticator.authenticateFromCache(req) === undefined) return true;
    return this.authenticator.authenticate(req).then(() => true);
  }
}

/** Last of the global guard chain: a route that is not `@Public()` needs a valid key. */
@Injectable()
export class RequireApiKeyGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (isPublic(this.reflector, context)) return true;
    const req = context.switchToHttp().getRequest<Request>();
    if (!req.auth) throw unauthorized(req);
    return true;
  }
}
