import { HttpStatus } from '@nestjs/common';
import { ADMIN_API, defineErrorCodes } from '../common/errors/error-code';

export { ADMIN_API } from '../common/errors/error-code';

/** The errors of the admin API. */
export const AdminErrors = defineErrorCodes(
  {
    /** A body that is not JSON, or a field of the wrong type, out of its rules or unknown. */
    INVALID_BODY: {
      status: HttpStatus.BAD_REQUEST,
      message: 'The request body is not valid',
      when: 'a body that is not JSON, or a field unknown (`__proto__` included), missing, of the wrong type (`null` included), nested deeper than the schema, with control characters in its text or out of its rules (the message names it)',
    },
    KEY_NOT_FOUND: {
      status: HttpStatus.NOT_FOUND,
      message: 'No key with this id exists',
      when: 'no key with this id (a path id is a whole UUID: a prefix is not matched)',
    },
    /** Rotating a revoked key: there is nothing left to replace. */
    KEY_REVOKED: {
      status: HttpStatus.CONFLICT,
      message: 'The key is revoked: issue a new one',
      when: 'rotation of a revoked key (the keys tool refuses it too)',
    },
    /** The audit trail's query: a parameter unknown, repeated or out of its rules (named). */
    INVALID_QUERY: {
      status: HttpStatus.BAD_REQUEST,
      message: 'A query parameter is unknown, repeated or out of its rules',
      when: 'the audit query: an unknown, repeated, empty or malformed parameter, or control characters in `actor` or `target`',
    },
  },
  { api: ADMIN_API },
);
