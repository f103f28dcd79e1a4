import { HttpStatus } from '@nestjs/common';
import { defineErrorCodes } from '../common/errors/error-code';

/** The error of a request refused at the door while the instance is overloaded. */
export const OverloadErrors = defineErrorCodes({
  OVERLOADED: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    message: 'The service is overloaded and refused this request before any work; retry later',
    when: 'the instance is overloaded and refused the request before doing anything (see [Overload](#overload)); `Retry-After` says when to retry',
  },
});
