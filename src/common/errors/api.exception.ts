import { HttpException } from '@nestjs/common';
import type { ErrorCode } from './error-code';

/** The body of every error response. */
export interface ErrorBody {
  code: string;
  message: string;
  status: number;
}

/**
 * An error the API answers on purpose: an {@link ErrorCode} (declared by the feature that owns it),
 * its HTTP status, a message for people, and any headers the answer must carry (`Allow`,
 * `Retry-After`, `WWW-Authenticate`).
 */
export class ApiException extends HttpException {
  readonly code: string;

  constructor(
    error: ErrorCode,
    message: string = error.message,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message, error.status);
    this.code = error.code;
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.getStatus() };
  }
}
