import { HttpStatus } from '@nestjs/common';

/** Every `code` the API can put in an Error body. */
export enum ErrorCode {
  BAD_REQUEST = 'BAD_REQUEST',
  INVALID_ORDER_ID = 'INVALID_ORDER_ID',
  UNAUTHORIZED = 'UNAUTHORIZED',
  NOT_FOUND = 'NOT_FOUND',
  ORDER_NOT_FOUND = 'ORDER_NOT_FOUND',
  METHOD_NOT_ALLOWED = 'METHOD_NOT_ALLOWED',
  ORDER_ALREADY_SHIPPED = 'ORDER_ALREADY_SHIPPED',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  RATE_LIMIT_EXCEEDED = 'RATE_LIMIT_EXCEEDED',
  API_KEY_BANNED = 'API_KEY_BANNED',
  INTERNAL_ERROR = 'INTERNAL_ERROR',
  SERVICE_UNAVAILABLE = 'SERVICE_UNAVAILABLE',
  REQUEST_TIMEOUT = 'REQUEST_TIMEOUT',
  HEADERS_TOO_LARGE = 'HEADERS_TOO_LARGE',
}

export const ERROR_STATUS: Record<ErrorCode, HttpStatus | number> = {
  [ErrorCode.BAD_REQUEST]: HttpStatus.BAD_REQUEST,
  [ErrorCode.INVALID_ORDER_ID]: HttpStatus.BAD_REQUEST,
  [ErrorCode.UNAUTHORIZED]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.NOT_FOUND]: HttpStatus.NOT_FOUND,
  [ErrorCode.ORDER_NOT_FOUND]: HttpStatus.NOT_FOUND,
  [ErrorCode.METHOD_NOT_ALLOWED]: HttpStatus.METHOD_NOT_ALLOWED,
  [ErrorCode.ORDER_ALREADY_SHIPPED]: HttpStatus.CONFLICT,
  [ErrorCode.PAYLOAD_TOO_LARGE]: HttpStatus.PAYLOAD_TOO_LARGE,
  [ErrorCode.RATE_LIMIT_EXCEEDED]: HttpStatus.TOO_MANY_REQUESTS,
  [ErrorCode.API_KEY_BANNED]: HttpStatus.TOO_MANY_REQUESTS,
  [ErrorCode.INTERNAL_ERROR]: HttpStatus.INTERNAL_SERVER_ERROR,
  [ErrorCode.SERVICE_UNAVAILABLE]: HttpStatus.SERVICE_UNAVAILABLE,
  [ErrorCode.REQUEST_TIMEOUT]: HttpStatus.REQUEST_TIMEOUT,
  // Nest's HttpStatus has no 431 (RFC 6585).
  [ErrorCode.HEADERS_TOO_LARGE]: 431,
};

/** Used when no more specific message is given. */
export const ERROR_MESSAGE: Record<ErrorCode, string> = {
  [ErrorCode.BAD_REQUEST]: 'The request is malformed',
  [ErrorCode.INVALID_ORDER_ID]: 'orderId must be a base-10 integer in the int64 range',
  [ErrorCode.UNAUTHORIZED]: 'A valid API key is required: send Authorization: Bearer <API_KEY>',
  [ErrorCode.NOT_FOUND]: 'The requested resource could not be found',
  [ErrorCode.ORDER_NOT_FOUND]: 'No order with this id exists',
  [ErrorCode.METHOD_NOT_ALLOWED]: 'This method is not allowed on this resource',
  [ErrorCode.ORDER_ALREADY_SHIPPED]: 'The order cannot be cancelled because it has already shipped',
  [ErrorCode.PAYLOAD_TOO_LARGE]: 'The request body is larger than 16 KiB',
  [ErrorCode.RATE_LIMIT_EXCEEDED]: 'Too many requests: the rate limit is exceeded',
  [ErrorCode.API_KEY_BANNED]:
    'This API key is temporarily banned for sending requests after being rate limited',
  [ErrorCode.INTERNAL_ERROR]: 'An unexpected error occurred',
  [ErrorCode.SERVICE_UNAVAILABLE]: 'The service is temporarily unavailable; retry later',
  [ErrorCode.REQUEST_TIMEOUT]: 'The request was not received within the server timeout',
  [ErrorCode.HEADERS_TOO_LARGE]: 'The request headers are too large',
};
