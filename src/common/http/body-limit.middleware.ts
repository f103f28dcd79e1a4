import type { NextFunction, Request, RequestHandler, Response } from 'express';
import getRawBody from 'raw-body';
import { ApiException } from '../errors/api.exception';
import { CommonErrors } from '../errors/error-code';

export const MAX_BODY_BYTES = 16 * 1024;

/** Whether a request has a body (RFC 9112 §6.3): a transfer coding, or a non-zero length. */
const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * No operation of the API takes a body, but a client may send one: read at most 16 KiB of any type
 * and answer 413 past that (Content-Length or chunked), instead of leaving the socket to an unread
 * stream. An application whose operations take bodies (the admin API) passes `keep`, which is
 * given each body read.
 *
 * raw-body, not body-parser: on an error body-parser reads the rest of the body before it answers
 * (its `read` resumes the stream and waits for the end), so a client declaring gigabytes kept a
 * core busy until Node's request timeout. raw-body refuses a declared length over the limit before
 * reading a byte, and stops reading (pauses the stream) as soon as the limit is passed; the 413
 * then carries `Connection: close`, so Node closes the socket after it instead of draining.
 *
 * An Express middleware (`configureApp`), not a Nest middleware applied to `*path`: that is a
 * route matched, with its path parameters decoded, and a proxy called on every request
 * (docs/performance.md). Its errors go to `next`, so that Nest's error
 * handler passes them to the global filter, like the route-not-found handler's.
 */
export function limitRequestBodies(keep?: (req: Request, body: Buffer) => void): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    // No body (nearly every request): nothing to read, and no promise.
    if (!hasBody(req)) {
      next();
      return;
    }
    const declared = req.headers['content-length'];
    getRawBody(req, { length: declared, limit: MAX_BODY_BYTES }).then(
      (body) => {
        keep?.(req, body);
        next();
      },
      (error: unknown) => {
        // The response was already given (a request timeout answered the slow body): nothing left.
        if (res.headersSent) return;
        // The rest of the body is never read: the connection cannot carry another request.
        res.setHeader('Connection', 'close');
        next(
          (error as { status?: number }).status === 413
            ? new ApiException(CommonErrors.PAYLOAD_TOO_LARGE)
            : new ApiException(CommonErrors.BAD_REQUEST, 'The request body could not be read'),
        );
      },
    );
  };
}
