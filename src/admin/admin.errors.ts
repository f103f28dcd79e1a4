import { HttpStatus } from '@nestjs/common';
import { defineErrorCodes } from '../common/errors/error-code';

/** The admin API's name in the code registry: its document lists its codes, the API's do not. */
export const ADMIN_API = 'admin';

/** The errors of the admin API. */
export const AdminErrors = defineErrorCodes(
  {
    /** A body that is not JSON, or a field of the wrong type, out of its rules or unknown. */
    INVALID_BODY: {
      status: HttpStatus.BAD_REQUEST,
      message: 'The request body is not valid',
    },
    KEY_NOT_FOUND: { status: HttpStatus.NOT_FOUND, message: 'No key with this id exists' },
    /** Rotating a revoked key: there is nothing left to replace. */
    KEY_REVOKED: {
      status: HttpStatus.CONFLICT,
      message: 'The key is revoked: issue a new one',
    },
    /** The audit trail's query: a parameter unknown, repeated or out of its rules (named). */
    INVALID_QUERY: {
      status: HttpStatus.BAD_REQUEST,
      message: 'A query parameter is unknown, repeated or out of its rules',
    },
  },
  { api: ADMIN_API },
);
