import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { raw } from 'express';
import { ApiException } from '../errors/api.exception';
import { CommonErrors } from '../errors/error-code';

export const MAX_BODY_BYTES = 16 * 1024;

/** Whether a request has a body (RFC 9112 §6.3): a transfer coding, or a non-zero length. */
const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * No operation takes a body, but a client may send one: read at most 16 KiB of any type and answer
 * 413 past that (Content-Length or chunked), instead of leaving the socket to an unread stream.
 * Nest's own JSON parser is off; it would only see JSON bodies.
 */
@Injectable()
export class BodyLimitMiddleware implements NestMiddleware {
  private readonly parse = raw({ type: () => true, limit: MAX_BODY_BYTES });

  use(req: Request, res: Response, next: NextFunction): void | Promise<void> {
    // No body (nearly every request): nothing to read, and no promise.
    if (!hasBody(req)) {
      next();
      return;
    }
    // Errors are thrown (not passed to `next`) so that the global filter shapes them.
    return new Promise((resolve, reject) => {
      this.parse(req, res, (error?: unknown) => {
        if (!error) {
          next();
          resolve();
          return;
        }
        const status = (error as { status?: number }).status;
        reject(
          status === 413
            ? new ApiException(CommonErrors.PAYLOAD_TOO_LARGE)
            : new ApiException(CommonErrors.BAD_REQUEST, 'The request body could not be read'),
        );
      });
    });
  }
}
