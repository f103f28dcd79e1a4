import type { NextFunction, Request, Response } from 'express';
import { routeOf } from '../common/http/route-of';
import type { MetricsService } from './metrics.service';

/**
 * Express middleware (installed first, in `configureApp`) that times every request, errors and
 * requests rejected by other middleware included. A response cut off before its end (the client
 * went away, or a stream broke) is counted with status `aborted`.
 */
export function requestMetrics(metrics: MetricsService) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = process.hrtime.bigint();
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const status = res.writableFinished ? String(res.statusCode) : 'aborted';
      metrics.observeRequest(req.method, routeOf(req), status, seconds);
    });
    next();
  };
}
