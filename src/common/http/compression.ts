import compression from 'compression';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** Bodies smaller than this go as they are: compressing them saves less than it costs. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * Compresses responses of at least 1 KiB for clients that accept it: brotli where the client
 * asks for it (quality 4, the package's default for on-the-fly use), else gzip. A streamed body
 * is compressed as it goes; `flushCompressed` pushes out what each batch compressed to.
 *
 * A request without Accept-Encoding skips the package's per-response wrapping altogether: it
 * would end in "identity" anyway. Such a response carries no `Vary: Accept-Encoding`, which is
 * safe: a cache that keeps it can serve it to any client, none needs it decoded.
 */
export function compressResponses(): RequestHandler {
  const compress = compression({ threshold: COMPRESSION_THRESHOLD_BYTES });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.headers['accept-encoding'] === undefined) {
      next();
      return;
    }
    void compress(req, res, next);
  };
}

/**
 * Sends what the compressor holds so far (a no-op on a response that is not compressed), so a
 * streamed body reaches the client batch by batch instead of when the compressor's window fills.
 */
export function flushCompressed(res: Response): void {
  (res as Partial<Pick<Response, 'flush'>>).flush?.();
}
