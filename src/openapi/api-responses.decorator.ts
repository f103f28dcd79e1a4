import { applyDecorators, HttpStatus, type Type } from '@nestjs/common';
import { ApiResponse, type HeaderObject } from '@nestjs/swagger';
import { AuthErrors } from '../auth/auth.errors';
import { CommonErrors, type ErrorCode } from '../common/errors/error-code';
import { OverloadErrors } from '../overload/overload.errors';
import { RateLimitErrors } from '../rate-limit/rate-limit.errors';
import { ErrorSchema } from './error.schema';

/** One documented response of an operation. */
export interface DocumentedResponse {
  description: string;
  /** The body: a schema class, or `[Class]` for an array of it. None: no body. */
  type?: Type | [Type];
  /** Error responses: the codes this status can carry (each becomes an example). */
  codes?: ErrorCode[];
  /** Headers of this response beside those every response of its status carries. */
  headers?: Record<string, HeaderObject>;
}

const integer = { type: 'integer' } as const;

/** On every response under a version, errors included (docs/api.md, Rate limits). */
export const RATE_LIMIT_HEADERS: Record<string, HeaderObject> = {
  'X-RateLimit-Limit': {
    description:
      'The limit of the window that binds most: of the minute and the day, the one with the ' +
      'fewest requests remaining (on a tie, the one that resets later).',
    schema: { ...integer, minimum: 1 },
    required: true,
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in that window.',
    schema: { ...integer, minimum: 0 },
    required: true,
  },
  'X-RateLimit-Reset': {
    description: "Unix time, in seconds, at which that window's count returns to its limit.",
    schema: { ...integer, format: 'int64' },
    required: true,
  },
  'X-Request-Id': {
    description:
      'The request id: the one the client sent, if sane, else a new UUID. In the logs too.',
    schema: { type: 'string' },
    required: true,
  },
};

const RETRY_AFTER: HeaderObject = {
  description: 'Whole seconds to wait before retrying (at least 1).',
  schema: { ...integer, minimum: 1 },
  required: true,
};

const WWW_AUTHENTICATE: HeaderObject = {
  description:
    'The bearer challenge: `Bearer realm="store-orders"`, with `error="invalid_token"` when a key ' +
    'was presented but is not valid (RFC 6750), and `error_description="The access token expired"` ' +
    'added when that key has expired (or its rotation grace period has ended).',
  schema: { type: 'string' },
  required: true,
};

/** Headers a response of this status always carries, beside the rate-limit ones. */
const HEADERS_BY_STATUS: Partial<Record<number, Record<string, HeaderObject>>> = {
  [HttpStatus.UNAUTHORIZED]: { 'WWW-Authenticate': WWW_AUTHENTICATE },
  [HttpStatus.TOO_MANY_REQUESTS]: { 'Retry-After': RETRY_AFTER },
  [HttpStatus.SERVICE_UNAVAILABLE]: { 'Retry-After': RETRY_AFTER },
};

/** What any authenticated, rate-limited operation can answer, whatever it does. */
const COMMON_RESPONSES: Record<number, DocumentedResponse> = {
  [HttpStatus.BAD_REQUEST]: {
    description: 'The request is malformed.',
    codes: [CommonErrors.BAD_REQUEST],
  },
  [HttpStatus.UNAUTHORIZED]: {
    description: 'The API key is missing or invalid.',
    codes: [AuthErrors.UNAUTHORIZED],
  },
  [HttpStatus.PAYLOAD_TOO_LARGE]: {
    description: 'A request body over 16 KiB (no operation takes a body).',
    codes: [CommonErrors.PAYLOAD_TOO_LARGE],
  },
  [HttpStatus.TOO_MANY_REQUESTS]: {
    description:
      'Too many requests: a rate-limit window is full (`RATE_LIMIT_EXCEEDED`), or the key is ' +
      'temporarily banned for sending on after its 429s (`API_KEY_BANNED`). Wait `Retry-After` ' +
      'seconds, and back off exponentially.',
    codes: [RateLimitErrors.RATE_LIMIT_EXCEEDED, RateLimitErrors.API_KEY_BANNED],
  },
  [HttpStatus.INTERNAL_SERVER_ERROR]: {
    description: 'An unexpected error; it is logged with the request id.',
    codes: [CommonErrors.INTERNAL_ERROR],
  },
  [HttpStatus.SERVICE_UNAVAILABLE]: {
    description:
      'Retry after `Retry-After` seconds: the instance is overloaded and refused the request ' +
      'at once, before any work (`OVERLOADED`), or the database is unreachable ' +
      '(`SERVICE_UNAVAILABLE`).',
    codes: [OverloadErrors.OVERLOADED, CommonErrors.SERVICE_UNAVAILABLE],
  },
};

/**
 * Documents every response of an operation: its own (`responses`), and those any operation can
 * answer (400, 401, 413, 429, 500, 503), each with its body schema and headers. An operation's
 * own entry for a status replaces the common one. Error codes are any feature's (`codes:
 * [OrderErrors.ORDER_NOT_FOUND]`): each becomes an example of its response.
 */
export function ApiOperationResponses(
  responses: Record<number, DocumentedResponse>,
): MethodDecorator {
  const all: Record<number, DocumentedResponse> = { ...COMMON_RESPONSES, ...responses };
  return applyDecorators(
    ...Object.entries(all).map(([key, response]) => {
      const status = Number(key);
      const { description, type, codes } = response;
      const headers = { ...RATE_LIMIT_HEADERS, ...HEADERS_BY_STATUS[status], ...response.headers };
      if (codes) {
        return ApiResponse({
          status,
          description,
          type: ErrorSchema,
          headers,
          examples: Object.fromEntries(codes.map((error) => [error.code, errorExample(error)])),
        });
      }
      return ApiResponse({ status, description, headers, ...(type ? { type } : {}) });
    }),
  );
}

export function errorExample(error: ErrorCode): { summary: string; value: object } {
  const body = { code: error.code, message: error.message, status: error.status };
  return { summary: error.message, value: body };
}
