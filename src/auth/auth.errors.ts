import { HttpStatus } from '@nestjs/common';
import { defineErrorCodes } from '../common/errors/error-code';

/** The errors of API keys. */
export const AuthErrors = defineErrorCodes({
  UNAUTHORIZED: {
    status: HttpStatus.UNAUTHORIZED,
    message: 'A valid API key is required: send Authorization: Bearer <API_KEY>',
    when: 'missing or invalid API key',
  },
  /** A valid key without the scope the route needs; the message names the scope. */
  INSUFFICIENT_SCOPE: {
    status: HttpStatus.FORBIDDEN,
    message: 'The API key lacks the scope this operation requires',
    when: 'a valid key without the scope the operation needs; `WWW-Authenticate` names it (see [Authentication](#authentication))',
  },
});

/** The 403's message: names the scope the key lacks. */
export function insufficientScopeMessage(scope: string): string {
  return `The API key lacks the scope ${scope}, which this operation requires`;
}
