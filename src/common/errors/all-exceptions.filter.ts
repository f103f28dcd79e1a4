import { ArgumentsHost, Catch, ExceptionFilter, HttpException, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { Request, Response } from 'express';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { ApiException } from './api.exception';
import { CommonErrors, errorCodeForStatus } from './error-code';
import { ErrorResponseHook } from './error-response-hook';

/**
 * The one place errors become responses. Whatever is thrown (ours, a module's stock Nest
 * exception, body-parser, TypeORM, a bug), the client gets `{code, message, status}` and nothing
 * more: no stack, SQL or class name. Unexpected errors are logged with the request id and
 * answered 500. Features take part through {@link ErrorResponseHook}s; this file imports none.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter, OnModuleInit {
  private mappers: ErrorResponseHook[] = [];
  private beforeResponse: ErrorResponseHook[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    @InjectPinoLogger(AllExceptionsFilter.name) private readonly logger: PinoLogger,
  ) {}

  onModuleInit(): void {
    const hooks = this.discovery
      .getProviders({ metadataKey: ErrorResponseHook.KEY })
      .map((wrapper) => wrapper.instance as ErrorResponseHook | undefined)
      .filter((hook) => hook !== undefined);
    this.mappers = hooks.filter((hook) => hook.toApiException !== undefined);
    this.beforeResponse = hooks.filter((hook) => hook.beforeErrorResponse !== undefined);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const res = http.getResponse<Response>();
    this.respond(exception, http.getRequest<Request>(), res).catch((err: unknown) => {
      this.logger.error({ err }, 'could not send an error response');
      res.destroy();
    });
  }

  private async respond(exception: unknown, req: Request, res: Response): Promise<void> {
    if (res.writableEnded) {
      this.afterTheAnswer(exception, req);
      return;
    }
    let error = this.toApiException(exception, req);
    for (const hook of this.beforeResponse) {
      if (res.headersSent) break;
      error = (await hook.beforeErrorResponse?.(error, req, res)) ?? error;
    }

    if (res.headersSent) {
      // A streamed body has begun: the only honest signal left is a broken connection.
      this.logger.error({ err: exception, reqId: req.id }, 'error after the response started');
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.getStatus()).json(error.toBody());
  }

  /**
   * An error from a request whose answer was already sent whole: Node's parser answered it
   * (malformed bytes after the request on the same connection), or a step went on after the
   * answer. The client has its answer; a step that only found the headers sent is not news.
   */
  private afterTheAnswer(exception: unknown, req: Request): void {
    const code = (exception as { code?: unknown } | null)?.code;
    if (code === 'ERR_HTTP_HEADERS_SENT') {
      this.logger.debug({ reqId: req.id, code }, 'a step ran after the answer was sent');
      return;
    }
    this.logger.warn({ err: exception, reqId: req.id }, 'error after the answer was sent');
  }

  private toApiException(exception: unknown, req: Request): ApiException {
    if (exception instanceof ApiException) return exception;
    for (const hook of this.mappers) {
      const mapped = hook.toApiException?.(exception, req);
      if (mapped) return mapped;
    }
    if (exception instanceof HttpException) return this.fromHttpException(exception, req);

    // http-errors raised by body-parser and the router (400 for a bad encoding, ...).
    const status = httpErrorStatus(exception);
    if (status !== undefined) return new ApiException(errorCodeForStatus(status));

    return this.unexpected(exception, req);
  }

  /**
   * A stock Nest exception (`NotFoundException`, `ConflictException` ...) keeps its status; its
   * code is the status's standard reason, its message the one it was given. A 5xx is logged and
   * its message replaced: it may say more than a client should read.
   */
  private fromHttpException(exception: HttpException, req: Request): ApiException {
    const status = exception.getStatus();
    if (status < 400 || status > 599) return this.unexpected(exception, req);
    const error = errorCodeForStatus(status);
    if (status >= 500) {
      this.logger.error({ err: exception, reqId: req.id }, 'server error raised by a handler');
      // The common 503's message says to retry; any other 5xx gets the 500's.
      const generic =
        error === CommonErrors.SERVICE_UNAVAILABLE ? error : CommonErrors.INTERNAL_ERROR;
      return new ApiException(error, generic.message);
    }
    return new ApiException(error, messageOf(exception) ?? error.message);
  }

  private unexpected(exception: unknown, req: Request): ApiException {
    this.logger.error({ err: exception, reqId: req.id }, 'unexpected error');
    return new ApiException(CommonErrors.INTERNAL_ERROR);
  }
}

/** The message a stock exception was given (`new ConflictException('...')`), if any. */
function messageOf(exception: HttpException): string | undefined {
  const response = exception.getResponse();
  if (typeof response === 'string') return response || undefined;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message || undefined;
  // ValidationPipe's list of what is wrong.
  if (Array.isArray(message) && message.every((m) => typeof m === 'string') && message.length > 0) {
    return message.join('; ');
  }
  return exception.message || undefined;
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
