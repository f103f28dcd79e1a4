import { HttpException } from '@nestjs/common';
import { ERROR_MESSAGE, ERROR_STATUS, ErrorCode } from './error-code';

/** The body of every error response. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
}

/**
 * An error the API answers on purpose: a code from {@link ErrorCode}, its HTTP status, a message
 * for people, and any headers the answer must carry (`Allow`, `Retry-After`, `WWW-Authenticate`).
 */
export class ApiException extends HttpException {
  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_MESSAGE[code],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message, ERROR_STATUS[code]);
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.getStatus() };
  }
}
