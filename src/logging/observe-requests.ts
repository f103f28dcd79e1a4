import type { NextFunction, Request, Response } from 'express';
import { routeOf } from '../common/http/route-of';
import type { MetricsService } from '../metrics/metrics.service';
import { redactUrl } from './redact';
import type { RequestLogWriter } from '../platform/request-log';
import { requestId } from './request-id';

/**
 * Express middleware installed first (`configureApp`), so that it sees every request, those
 * refused by later middleware (a body over the limit, a path that cannot be decoded) included.
 * It gives the request its id (echoed as X-Request-Id), and when the response is done, with one
 * `close` listener, records it in the metrics and writes the request's one log line:
 *
 * `{"req":{"id","method","url","remoteAddress"},"res":{"statusCode"},"responseTime","route","keyId",
 * "msg":"request completed"}`: the shape of pino-http's line, with the route pattern and the id of
 * the API key (never the key). `request errored` for a 5xx; `request aborted` (and status
 * `aborted` in the metrics) for a response cut off before its end, whether the client went away
 * or a stream broke.
 *
 * Not pino-http under nestjs-pino's AsyncLocalStorage: they make a child logger per request, and the
 * store turns on async_hooks for every promise, a large share of a cancel's cost
 * (docs/performance.md, "Performance notes"). Lines logged
 * while serving a request carry `reqId` explicitly instead. The line itself is built by the
 * {@link RequestLogWriter}.
 */
export function observeRequests(metrics: MetricsService, log: RequestLogWriter) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const id = requestId(req, res);
    const start = performance.now();
    res.on('close', () => {
      const elapsedMs = performance.now() - start;
      const route = routeOf(req);
      const ended = res.writableEnded;
      metrics.observeRequest(
        req.method,
        route,
        ended ? String(res.statusCode) : 'aborted',
        elapsedMs / 1000,
      );
      log(
        {
          req: {
            id,
            method: req.method,
            url: redactUrl(req.originalUrl),
            remoteAddress: req.socket.remoteAddress,
          },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(elapsedMs),
          route,
          keyId: req.auth?.keyId,
        },
        !ended
          ? 'request aborted'
          : res.statusCode >= 500
            ? 'request errored'
            : 'request completed',
      );
    });
    next();
  };
}
