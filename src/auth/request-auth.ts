import type { ActiveKey } from './api-keys.repository';

/**
/**
 * Why a request has no valid key: none was sent, the one sent is not valid, it has expired (or
 * its rotation grace period has ended), more than one Authorization header was sent (answered
 * 400), or it could not be checked (the database is unavailable; the request is answered 503).
 */
export type AuthFailure = 'missing' | 'invalid' | 'expired' | 'ambiguous' | 'unavailable';

declare module 'express-serve-static-core' {
  interface Request {
    /** The request's valid API key, once authenticated. */
    auth?: ActiveKey;
    /** Set instead of `auth` when authentication found no valid key. */
    authFailure?: AuthFailure;
  }
}
