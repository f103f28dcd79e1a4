import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiException } from '../common/errors/api.exception';
import { CommonErrors } from '../common/errors/error-code';
import { httpRequestOf } from '../common/http/http-context';
import { perRoute } from '../common/http/route-metadata';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { AuthErrors, insufficientScopeMessage } from './auth.errors';
import { isPublic } from './public.decorator';
import { grantsScope, requiredScope } from './scopes';

export const WWW_AUTHENTICATE = 'Bearer realm="store-orders"';

const CHALLENGES: Record<NonNullable<Request['authFailure']>, string> = {
  missing: WWW_AUTHENTICATE,
  unavailable: WWW_AUTHENTICATE,
  invalid: `${WWW_AUTHENTICATE}, error="invalid_token"`,
  expired: `${WWW_AUTHENTICATE}, error="invalid_token", error_description="The access token expired"`,
  ambiguous: `${WWW_AUTHENTICATE}, error="invalid_request"`,
};

/**
 * The 401 of an unauthenticated request: with `error="invalid_token"` when a key was presented, and the
 * description RFC 6750 §3 gives as its example when that key has expired.
 */
export function unauthorized(req: Request): ApiException {
  const challenge = CHALLENGES[req.authFailure ?? 'missing'];
  return new ApiException(AuthErrors.UNAUTHORIZED, undefined, { 'WWW-Authenticate': challenge });
}

/**
 * The 403 of a valid key without the scope the route needs, with the challenge of
 * RFC 6750 §3.1 naming that scope.
 */
export function insufficientScope(scope: string): ApiException {
  return new ApiException(AuthErrors.INSUFFICIENT_SCOPE, insufficientScopeMessage(scope), {
    'WWW-Authenticate': `${WWW_AUTHENTICATE}, error="insufficient_scope", scope="${scope}"`,
  });
}

/** More than one Authorization header: 400 (RFC 6750 §3.1), never a guess at which one counts. */
export function ambiguousCredentials(): ApiException {
  return new ApiException(CommonErrors.BAD_REQUEST, 'Send exactly one Authorization header', {
    'WWW-Authenticate': CHALLENGES.ambiguous,
  });
}

/** The scope each route needs (`@RequireScope()`), read once per route. */
const scopeOfRoute = perRoute(requiredScope);

/**
 * Last of the global guard chain: a route that is not `@Public()` needs a valid key (401), and
 * that key needs the scope the route declares, if any (403). It runs after the rate limiter, so
 * a 403 has counted against the key's limits and carries the headers, as a 401 does. The key's
 * scopes are cached with it: the check asks nothing of the database.
 */
@Injectable()
export class RequireApiKeyGuard implements CanActivate {
  constructor(private readonly authenticator: ApiKeyAuthenticator) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (isPublic(context)) return true;
    const req = httpRequestOf(context);
    // Undecided only on a route that skipped the rate limiter: then it is looked up here.
    if (!req.auth && !req.authFailure) await this.authenticator.authenticate(req);
    return requireKey(req, scopeOfRoute(context));
  }
}

function requireKey(req: Request, scope: string | undefined): true {
  const key = req.auth;
  if (key) {
    if (scope === undefined || grantsScope(key.scopes, scope)) return true;
    throw insufficientScope(scope);
  }
  if (req.authFailure === 'ambiguous') throw ambiguousCredentials();
  throw unauthorized(req);
}
