import { HttpStatus } from '@nestjs/common';
import { defineErrorCodes } from '../common/errors/error-code';

/** The errors of rate limiting (both 429, with Retry-After). */
export const RateLimitErrors = defineErrorCodes({
  RATE_LIMIT_EXCEEDED: {
    status: HttpStatus.TOO_MANY_REQUESTS,
    message: 'Too many requests: the rate limit is exceeded',
    when: 'over the limit; `Retry-After` in seconds',
  },
  API_KEY_BANNED: {
    status: HttpStatus.TOO_MANY_REQUESTS,
    message: 'This API key is temporarily banned for sending requests after being rate limited',
    when: 'banned for sending after 429s; `Retry-After` = ban time left',
  },
});
