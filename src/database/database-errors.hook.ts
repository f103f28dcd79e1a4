import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { ApiException } from '../common/errors/api.exception';
import { CommonErrors } from '../common/errors/error-code';
import { ErrorResponseHook } from '../common/errors/error-response-hook';
import { isDatabaseUnavailable, isPoolWaitTimeout } from './database-errors';

/** Seconds a client should wait before retrying while the database is unreachable. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * An unreachable or overloaded database is answered 503 with Retry-After, deliberately, whatever
 * the feature that asked it: not the 500 of a bug. A request that waited in vain for a free
 * connection of a full pool is logged as that, not as the database being unavailable: the
 * database answers, the instance has more work than connections.
 */
@Injectable()
@ErrorResponseHook()
export class DatabaseErrorsHook implements ErrorResponseHook {
  constructor(@InjectPinoLogger(DatabaseErrorsHook.name) private readonly logger: PinoLogger) {}

  toApiException(exception: unknown, req: Request): ApiException | undefined {
    if (!isDatabaseUnavailable(exception)) return undefined;
    if (isPoolWaitTimeout(exception)) {
      this.logger.warn(
        { reqId: req.id },
        'no free database connection within the connect timeout: the pool is busy',
      );
    } else {
      this.logger.warn({ err: exception, reqId: req.id }, 'database unavailable');
    }
    return new ApiException(CommonErrors.SERVICE_UNAVAILABLE, undefined, {
      'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS),
    });
  }
}
