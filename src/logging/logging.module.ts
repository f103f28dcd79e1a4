import { DynamicModule, Module } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import type { Request } from 'express';
import { routeOf } from '../common/http/route-of';
import { AppConfig } from '../config/app-config';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's id (`req.id`): the caller's X-Request-Id when it is a sane token, else a new UUID;
 * echoed on the response. Given once, by {@link assignRequestId}, and reused by the request log.
 */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const assigned = (req as { id?: unknown }).id;
  if (typeof assigned === 'string') return assigned;
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', id);
  (req as { id?: string }).id = id;
  return id;
}

/**
 * Express middleware installed first (`configureApp`): every response carries its id, also one
 * refused before Nest's middleware runs (a body over the limit, a path that cannot be decoded).
 */
export function assignRequestId(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  requestId(req, res);
  next();
}

/**
 * What the one line per request adds to pino-http's (`req` with id and method, `res.statusCode`,
 * `responseTime` in ms): the route pattern and the id of the API key that made it (set by the auth
 * guard as `req.auth`); never the key itself.
 */
export function requestSummary(req: IncomingMessage, _res: ServerResponse, line: object): object {
  const keyId = (req as { auth?: { keyId?: unknown } }).auth?.keyId;
  return { ...line, route: routeOf(req as Request), ...(keyId === undefined ? {} : { keyId }) };
}

/**
 * Structured JSON logs (pino): one line per request with its id, and the same id on every line
 * logged while serving it. Never the Authorization header. Pretty only in development.
 */
@Module({})
export class LoggingModule {
  /**
   * Called when the application is assembled: nestjs-pino creates the `@InjectPinoLogger()`
   * providers of every class decorated by then.
   */
  static forRoot(): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            pinoHttp: {
              level: config.logLevel,
              genReqId: requestId,
              customSuccessObject: requestSummary,
              customErrorObject: (req, res, _err, line: object) => requestSummary(req, res, line),
              serializers: {
                req: (req: {
                  id: string;
                  method: string;
                  url: string;
                  remoteAddress?: string;
                }) => ({
                  id: req.id,
                  method: req.method,
                  url: req.url,
                  remoteAddress: req.remoteAddress,
                }),
                res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
              },
              transport:
                process.env.NODE_ENV === 'development'
                  ? { target: 'pino-pretty', options: { singleLine: true } }
                  : undefined,
            },
          }),
        }),
      ],
    };
  }
}
