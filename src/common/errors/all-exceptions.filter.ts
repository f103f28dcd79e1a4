import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import type { Request, Response } from 'express';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { isDatabaseUnavailable } from '../../database/database-errors';
import { RateLimitService } from '../../rate-limit/rate-limit.service';
import { allowedMethods } from '../http/allowed-methods';
import { ApiException } from './api.exception';
import { ErrorCode } from './error-code';

/** Seconds a client should wait before retrying while the database is unreachable. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Codes for HTTP errors raised by Nest, Express or body-parser rather than by our own code. */
const CODE_BY_STATUS: Partial<Record<number, ErrorCode>> = {
  [HttpStatus.BAD_REQUEST]: ErrorCode.BAD_REQUEST,
  [HttpStatus.UNAUTHORIZED]: ErrorCode.UNAUTHORIZED,
  [HttpStatus.NOT_FOUND]: ErrorCode.NOT_FOUND,
  [HttpStatus.METHOD_NOT_ALLOWED]: ErrorCode.METHOD_NOT_ALLOWED,
  [HttpStatus.PAYLOAD_TOO_LARGE]: ErrorCode.PAYLOAD_TOO_LARGE,
  [HttpStatus.TOO_MANY_REQUESTS]: ErrorCode.RATE_LIMIT_EXCEEDED,
  [HttpStatus.SERVICE_UNAVAILABLE]: ErrorCode.SERVICE_UNAVAILABLE,
};

/**
 * The one place errors become responses. Whatever is thrown (ours, Nest's router, body-parser,
 * TypeORM, a bug), the client gets `{code, message, status}` and nothing more: no stack, SQL or
 * class name. Unexpected errors are logged with the request id and answered 500.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(
    private readonly rateLimit: RateLimitService,
    @InjectPinoLogger(AllExceptionsFilter.name) private readonly logger: PinoLogger,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const res = http.getResponse<Response>();
    this.respond(exception, http.getRequest<Request>(), res).catch((err: unknown) => {
      this.logger.error({ err }, 'could not send an error response');
      res.destroy();
    });
  }

  private async respond(exception: unknown, req: Request, res: Response): Promise<void> {
    let error = this.toApiException(exception, req);
    // Errors raised before the guards (unknown path, 405, 413) are counted and get their
    // rate-limit headers here; over the limit, the 429 is the answer.
    if (!res.headersSent) error = (await this.rateLimit.admitUncounted(req, res)) ?? error;

    if (res.headersSent) {
      // A streamed body has begun: the only honest signal left is a broken connection.
      this.logger.error({ err: exception, reqId: req.id }, 'error after the response started');
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.getStatus()).json(error.toBody());
  }

  private toApiException(exception: unknown, req: Request): ApiException {
    if (exception instanceof ApiException) return exception;

    if (exception instanceof HttpException) {
      if (exception.getStatus() === 404) return this.routeNotFound(req);
      return this.fromStatus(exception.getStatus(), exception, req);
    }

    if (isDatabaseUnavailable(exception)) {
      this.logger.warn({ err: exception, reqId: req.id }, 'database unavailable');
      return new ApiException(ErrorCode.SERVICE_UNAVAILABLE, undefined, {
        'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS),
      });
    }

    // http-errors raised by body-parser and the router (413, 400 for a bad encoding, ...).
    const status = httpErrorStatus(exception);
    if (status !== undefined) return this.fromStatus(status, exception, req);

    return this.unexpected(exception, req);
  }

  /** Nest's router answers 404 for a known path with another method too: tell them apart. */
  private routeNotFound(req: Request): ApiException {
    const allow = allowedMethods(req);
    if (allow.length === 0) return new ApiException(ErrorCode.NOT_FOUND);
    return new ApiException(
      ErrorCode.METHOD_NOT_ALLOWED,
      `${req.method} is not allowed here; allowed: ${allow.join(', ')}`,
      { Allow: allow.join(', ') },
    );
  }

  private fromStatus(status: number, exception: unknown, req: Request): ApiException {
    const code = CODE_BY_STATUS[status] ?? (status < 500 ? ErrorCode.BAD_REQUEST : undefined);
    if (code === undefined || status >= 500) return this.unexpected(exception, req);
    return new ApiException(code);
  }

  private unexpected(exception: unknown, req: Request): ApiException {
    this.logger.error({ err: exception, reqId: req.id }, 'unexpected error');
    return new ApiException(ErrorCode.INTERNAL_ERROR);
  }
}

/** The status of an `http-errors` error (body-parser, router), when it is a client error. */
function httpErrorStatus(exception: unknown): number | undefined {
  if (typeof exception !== 'object' || exception === null) return undefined;
  const { status, statusCode, expose } = exception as {
    status?: unknown;
    statusCode?: unknown;
    expose?: unknown;
  };
  const value = typeof status === 'number' ? status : statusCode;
  return expose === true && typeof value === 'number' && value >= 400 && value < 500
    ? value
    : undefined;
}
