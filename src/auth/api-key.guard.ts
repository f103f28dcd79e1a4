import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiException } from '../common/errors/api.exception';
import { CommonErrors } from '../common/errors/error-code';
import { httpRequestOf } from '../common/http/http-context';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { AuthErrors } from './auth.errors';
import { isPublic } from './public.decorator';

export const WWW_AUTHENTICATE = 'Bearer realm="store-orders"';

const CHALLENGES: Record<NonNullable<Request['authFailure']>, string> = {
  missing: WWW_AUTHENTICATE,
  unavailable: WWW_AUTHENTICATE,
  invalid: `${WWW_AUTHENTICATE}, error="invalid_token"`,
  expired: `${WWW_AUTHENTICATE}, error="invalid_token", error_description="The access token expired"`,
  ambiguous: `${WWW_AUTHENTICATE}, error="invalid_request"`,
};

/**
 * The 401 of the contract: with `error="invalid_token"` when a key was presented, and the
 * description RFC 6750 §3 gives as its example when that key has expired.
 */
export function unauthorized(req: Request): ApiException {
  const challenge = CHALLENGES[req.authFailure ?? 'missing'];
  return new ApiException(AuthErrors.UNAUTHORIZED, undefined, { 'WWW-Authenticate': challenge });
}

/** More than one Authorization header: 400 (RFC 6750 §3.1), never a guess at which one counts. */
export function ambiguousCredentials(): ApiException {
  return new ApiException(CommonErrors.BAD_REQUEST, 'Send exactly one Authorization header', {
    'WWW-Authenticate': CHALLENGES.ambiguous,
  });
}

/** Last of the global guard chain: a route that is not `@Public()` needs a valid key. */
@Injectable()
export class RequireApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (isPublic(this.reflector, context)) return true;
    const req = httpRequestOf(context);
    // Undecided only on a route that skipped the rate limiter: then it is looked up here.
    if (!req.auth && !req.authFailure)
      return this.authenticator.authenticate(req).then(() => requireKey(req));
    return requireKey(req);
  }
}

function requireKey(req: Request): true {
  if (req.auth) return true;
  if (req.authFailure === 'ambiguous') throw ambiguousCredentials();
  throw unauthorized(req);
}
