import type { ActiveKey } from './api-key.store';

/** Why a request has no valid key: none was sent, or the one sent is not valid. */
export type AuthFailure = 'missing' | 'invalid';

declare module 'express-serve-static-core' {
  interface Request {
    /** The request's valid API key, once authenticated. */
    auth?: ActiveKey;
    /** Set instead of `auth` when authentication found no valid key. */
    authFailure?: AuthFailure;
  }
}
