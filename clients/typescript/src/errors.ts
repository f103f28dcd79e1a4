/** What the API answers on an error: `{code, message, status}`. */
interface ErrorBody {
  code?: unknown;
  message?: unknown;
}

/** The fields of a {@link StoreOrdersError}. */
export interface StoreOrdersErrorFields {
  code: string;
  status: number;
  message: string;
  requestId?: string;
  retryAfter?: number;
}

/**
 * An answer of the API that is not a success: its `code` (`ORDER_ALREADY_SHIPPED`,
 * `INSUFFICIENT_SCOPE` …), HTTP `status` and `message` from the error body, the `X-Request-Id` to
 * quote to the operator, and `retryAfter` (seconds) when the answer said when to come back.
 */
export class StoreOrdersError extends Error {
  override readonly name = 'StoreOrdersError';
  readonly code: string;
  readonly status: number;
  readonly requestId: string | undefined;
  readonly retryAfter: number | undefined;

  constructor(fields: StoreOrdersErrorFields) {
    super(fields.message);
    this.code = fields.code;
    this.status = fields.status;
    this.requestId = fields.requestId;
    this.retryAfter = fields.retryAfter;
  }

  /**
   * The error of an answer and its parsed body. A body that is not the API's (a proxy's HTML
   * page) still gives a code: `HTTP_<status>`.
   */
  static fromResponse(response: Response, body: unknown): StoreOrdersError {
    const { code, message } = (typeof body === 'object' && body !== null ? body : {}) as ErrorBody;
    const retryAfter = retryAfterSeconds(response.headers.get('Retry-After'));
    return new StoreOrdersError({
      code: typeof code === 'string' ? code : `HTTP_${response.status}`,
      status: response.status,
      message:
        typeof message === 'string' ? message : `${response.status} ${response.statusText}`.trim(),
      requestId: response.headers.get('X-Request-Id') ?? undefined,
      ...(retryAfter !== undefined && { retryAfter }),
    });
  }
}

/**
 * A walk of pages that cannot go on: the server answered `hasMore` with no `nextCursor`, or with
 * a cursor the walk had already sent, so that it would ask for the same pages forever.
 * `cursor` is the one whose page said so (`undefined`: the first page).
 */
export class StoreOrdersPagingError extends Error {
  override readonly name = 'StoreOrdersPagingError';

  constructor(
    message: string,
    readonly cursor: string | undefined,
  ) {
    super(message);
  }
}

/**
 * `Retry-After` in seconds (RFC 9110: a number of seconds or an HTTP date), or `undefined` when
 * the answer has none or it cannot be read.
 */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
