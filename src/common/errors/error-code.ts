import { HttpStatus } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';

/**
 * One `code` the API can put in an error body, with its HTTP status and the message used when no
 * more specific one is given. Each feature declares its own with {@link defineErrorCodes}, in its
 * own folder (`orders/order.errors.ts`, `auth/auth.errors.ts` ...).
 */
export interface ErrorCode<Code extends string = string> {
  readonly code: Code;
  readonly status: number;
  readonly message: string;
}

/** A code as its feature declares it: what clients get, and when they get it. */
interface Definition extends Omit<ErrorCode, 'code'> {
  /** When a client gets it, as docs/api.md lists it (`npm run generate`); the message if unset. */
  readonly when?: string;
}

type Definitions<Code extends string> = Record<Code, Definition>;

/** A code with what docs/api.md says of it. */
export interface DocumentedErrorCode {
  readonly error: ErrorCode;
  readonly when: string;
}

/** The API whose documents list a code unless its declaration names another. */
const MAIN_API = 'main';

/** The admin API's name in the registry: its document lists its codes, the API's do not. */
export const ADMIN_API = 'admin';

/** Every code declared so far, by name, with the APIs that declared it: what documents list. */
const registry = new Map<string, { error: ErrorCode; apis: Map<string, string> }>();

/**
 * Declares a feature's error codes and registers them, so that the OpenAPI document lists them
 * beside every other feature's. A code is one meaning: declaring a name twice with another
 * status or message is a mistake caught when the file is loaded.
 *
 * ```ts
 * export const WidgetErrors = defineErrorCodes({
 *   WIDGET_JAMMED: { status: HttpStatus.CONFLICT, message: 'The widget is jammed' },
 * });
 * throw new ApiException(WidgetErrors.WIDGET_JAMMED);
 * ```
 *
 * `api` names the API whose document lists them when it is not the main one: the admin API's
 * codes (`'admin'`) are loaded in the same process, yet never listed by the main API's documents.
 */
export function defineErrorCodes<Code extends string>(
  definitions: Definitions<Code>,
  { api = MAIN_API }: { api?: string } = {},
): { readonly [C in Code]: ErrorCode<C> } {
  const codes = {} as Record<Code, ErrorCode>;
  for (const code of Object.keys(definitions) as Code[]) {
    const { status, message, when = message } = definitions[code];
    const error: ErrorCode = Object.freeze({ code, status, message });
    const known = registry.get(code);
    if (known && (known.error.status !== error.status || known.error.message !== error.message)) {
      throw new Error(`Error code ${code} is already declared with another status or message`);
    }
    const entry = known ?? { error, apis: new Map<string, string>() };
    entry.apis.set(api, when);
    registry.set(code, entry);
    codes[code] = entry.error;
  }
  return codes as { readonly [C in Code]: ErrorCode<C> };
}

/**
 * Every code registered for this API (the main one unless named), by status (in the order of
 * declaration within one status).
 */
export function registeredErrorCodes(api: string = MAIN_API): ErrorCode[] {
  return documentedErrorCodes(api).map(({ error }) => error);
}

/** {@link registeredErrorCodes}, each with when a client gets it. */
export function documentedErrorCodes(api: string = MAIN_API): DocumentedErrorCode[] {
  return [...registry.values()]
    .filter((entry) => entry.apis.has(api))
    .sort((a, b) => a.error.status - b.error.status)
    .map(({ error, apis }) => ({ error, when: apis.get(api) ?? error.message }));
}

/** The codes of no particular feature: what the framework, the router or the body limit raise. */
export const CommonErrors = defineErrorCodes({
  BAD_REQUEST: {
    status: HttpStatus.BAD_REQUEST,
    message: 'The request is malformed',
    when: 'any other malformed request',
  },
  NOT_FOUND: {
    status: HttpStatus.NOT_FOUND,
    message: 'The requested resource could not be found',
    when: 'unknown path',
  },
  METHOD_NOT_ALLOWED: {
    status: HttpStatus.METHOD_NOT_ALLOWED,
    message: 'This method is not allowed on this resource',
    when: 'known path, other method; the `Allow` header lists the methods',
  },
  PAYLOAD_TOO_LARGE: {
    status: HttpStatus.PAYLOAD_TOO_LARGE,
    message: 'The request body is larger than 16 KiB',
    when: "a request body over 16 KiB (no operation of the API takes a body; the admin API's take at most 16 KiB)",
  },
  INTERNAL_ERROR: {
    status: HttpStatus.INTERNAL_SERVER_ERROR,
    message: 'An unexpected error occurred',
    when: 'anything unexpected (logged with the request id)',
  },
  SERVICE_UNAVAILABLE: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    message: 'The service is temporarily unavailable; retry later',
    when: 'the database is unreachable; `Retry-After` says when to retry',
  },
  REQUEST_TIMEOUT: {
    status: HttpStatus.REQUEST_TIMEOUT,
    message: 'The request was not received within the server timeout',
    when: "headers or body not received within the server's timeouts (see [Configuration](configuration.md))",
  },
  GONE: {
    status: HttpStatus.GONE,
    message: 'This route is gone: it was retired at its sunset date',
    when: 'a deprecated route on or after its sunset date (see [Stability and deprecation](#stability-and-deprecation))',
  },
  // Nest's HttpStatus has no 431 (RFC 6585).
  HEADERS_TOO_LARGE: {
    status: 431,
    message: 'The request headers are too large',
    when: "request headers over Node's limit (16 KiB)",
  },
});

const COMMON_BY_STATUS = new Map<number, ErrorCode>(
  Object.values<ErrorCode>(CommonErrors).map((error) => [error.status, error]),
);

/**
 * The error for a bare HTTP status (a stock `HttpException`, an `http-errors` error): the common
 * code of that status if there is one, else the status's standard reason in upper snake case
 * (`422` → `UNPROCESSABLE_ENTITY`, `409` → `CONFLICT`), as docs/extending.md says.
 */
export function errorCodeForStatus(status: number): ErrorCode {
  const common = COMMON_BY_STATUS.get(status);
  if (common) return common;
  const name = (HttpStatus as unknown as Record<number, string | undefined>)[status];
  const code = name ?? `HTTP_${status}`;
  return { code, status, message: STATUS_CODES[status] ?? `HTTP ${status}` };
}
