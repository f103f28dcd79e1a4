import { HttpStatus } from '@nestjs/common';
import { defineErrorCodes } from '../common/errors/error-code';

/** The errors of API keys. */
export const AuthErrors = defineErrorCodes({
  UNAUTHORIZED: {
    status: HttpStatus.UNAUTHORIZED,
    message: 'A valid API key is required: send Authorization: Bearer <API_KEY>',
  },
});
