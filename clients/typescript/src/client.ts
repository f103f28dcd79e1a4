import createClient, { type Client } from 'openapi-fetch';
import type { paths as AdminPaths } from './generated/admin.js';
import type { paths as V1Paths } from './generated/v1.js';
import type { components as V2Components, paths as V2Paths } from './generated/v2.js';
import { StoreOrdersError, StoreOrdersPagingError } from './errors.js';
import { withExactIds } from './exact-json.js';
import { checkOptions } from './options.js';
import { type Fetch, type RetryOptions, retrying } from './retry.js';

/** An order as the API writes it; `id` and `petId` are exact decimal strings (int64). */
export type Order = V2Components['schemas']['Order'];
export type OrderStatus = V2Components['schemas']['OrderStatus'];
/** One page of `GET /v2/store/orders`. */
export type OrderPage = V2Components['schemas']['OrderPage'];

/** An int64 id: a decimal string, a bigint, or a number no larger than 2^53. */
export type OrderId = string | bigint | number;

type PageQuery = NonNullable<V2Paths['/store/orders']['get']['parameters']['query']>;

/**
 * The v2 filters and sort (`status`, `petId`, `complete`, `shipDateFrom`, `shipDateTo`, `sort`,
 * `limit`), as `GET /v2/store/orders` takes them; `status` one status or several.
 */
export type OrderFilters = Omit<PageQuery, 'cursor' | 'status' | 'petId'> & {
  status?: OrderStatus | readonly OrderStatus[];
  petId?: OrderId;
};

/** Where the key's binding rate-limit window stood at the last answer (`X-RateLimit-*`). */
export interface RateLimit {
  limit: number;
  remaining: number;
  /** Unix time, in seconds, at which the window is full again. */
  reset: number;
}

export interface StoreOrdersClientOptions {
  /** The server's root (`https://orders.example.com`): the client adds `/v1` and `/v2`. */
  baseUrl: string;
  /** The API key, sent as `Authorization: Bearer <key>` and nowhere else. */
  apiKey: string;
  /**
   * The admin listener's root (`ADMIN_HOST:ADMIN_PORT`, never the API's port), for `admin`;
   * `baseUrl` unless given. Its paths start with `/admin/v1`.
   */
  adminBaseUrl?: string;
  /**
   * Retries of 429 and 503, and of failed connections of idempotent calls (see
   * {@link RetryOptions}); `false`: none.
   */
  retry?: RetryOptions | false;
  /**
   * The longest one try of a request may take, in ms, reading its answer included (a whole
   * number from 1 to 2^31 - 1); none unless given. A try timed out fails with a `DOMException`
   * named `TimeoutError`; before its answer came, it is retried as a failed connection is.
   */
  timeout?: number;
  /** The fetch to send requests with (default: the global `fetch`). */
  fetch?: Fetch;
}

/** What every call of `orders` takes beside its arguments. */
export interface CallOptions {
  /** Aborts the call, during a try or a wait between tries: it rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** openapi-fetch's answer, reduced to what the client reads of it. */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful answer, else its {@link StoreOrdersError}. */
function dataOf<T>({ data, error, response }: Answer<T>): T {
  if (!response.ok) throw StoreOrdersError.fromResponse(response, error);
  return data as T;
}

function int64(id: OrderId): string {
  if (typeof id === 'number' && !Number.isSafeInteger(id)) {
    throw new RangeError(`${id} is not an exact integer: pass an id beyond 2^53 as a string`);
  }
  return String(id);
}

const withoutSlash = (url: string): string => url.replace(/\/+$/, '');

/** The orders: v1's whole list, v2's pages walked, cancelling. */
export class Orders {
  constructor(
    private readonly v1: Client<V1Paths>,
    private readonly v2: Client<V2Paths>,
  ) {}

  /** Every order, by id (`GET /v1/store/orders`). */
  async list(options: CallOptions = {}): Promise<Order[]> {
    return dataOf(await this.v1.GET('/store/orders', { signal: options.signal }));
  }

  /** One page of the filtered orders, after `cursor` (`GET /v2/store/orders`). */
  async page(
    filters: OrderFilters = {},
    cursor?: string,
    options: CallOptions = {},
  ): Promise<OrderPage> {
    const { status, petId, ...rest } = filters;
    const query: PageQuery = {
      ...rest,
      ...(status !== undefined && { status: typeof status === 'string' ? [status] : [...status] }),
      ...(petId !== undefined && { petId: int64(petId) }),
      ...(cursor !== undefined && { cursor }),
    };
    return dataOf(
      await this.v2.GET('/store/orders', { params: { query }, signal: options.signal }),
    );
  }

  /**
   * Every order matching the filters, page after page following `nextCursor` until `hasMore` is
   * false: a page may be short, even empty, before the last one. A walk that would not move (a
   * page with `hasMore` but no `nextCursor`, or a cursor already sent) ends with a
   * {@link StoreOrdersPagingError} rather than ask for the same pages forever.
   */
  async *each(
    filters: OrderFilters = {},
    options: CallOptions = {},
  ): AsyncGenerator<Order, void, undefined> {
    const sent = new Set<string>();
    let cursor: string | undefined;
    for (;;) {
      const page = await this.page(filters, cursor, options);
      const next = page.hasMore ? page.nextCursor : undefined;
      // Checked before its orders are yielded: a page sent again would yield them twice.
      if (page.hasMore && (next === undefined || next === '')) {
        throw new StoreOrdersPagingError(
          'the server answered hasMore without a nextCursor',
          cursor,
        );
      }
      if (next !== undefined && sent.has(next)) {
        throw new StoreOrdersPagingError(
          `the server answered a nextCursor this walk already sent (${next}): the walk makes no progress`,
          cursor,
        );
      }
      yield* page.data;
      if (next === undefined) return;
      sent.add(next);
      cursor = next;
    }
  }

  /**
   * Cancels a pending order (`DELETE /v2/store/orders/{orderId}`); resolves when it is cancelled,
   * as it does for one cancelled before. A shipped order is a `StoreOrdersError` 409
   * `ORDER_ALREADY_SHIPPED`, an unknown one 404 `ORDER_NOT_FOUND`.
   */
  async cancel(id: OrderId, options: CallOptions = {}): Promise<void> {
    dataOf(
      await this.v2.DELETE('/store/orders/{orderId}', {
        params: { path: { orderId: int64(id) } },
        signal: options.signal,
      }),
    );
  }
}

/**
 * The Store Orders API: `orders` for what most clients do, and the typed operations of each
 * document for the rest (`v1`, `v2`, `admin`: openapi-fetch clients, answering `{data, error,
 * response}`). Every request carries the key, is bounded by `timeout`, is retried on 429, 503
 * and failed connections as `retry` says, and reads int64 ids as exact strings. The options are
 * checked here: a nonsensical one throws a `TypeError` naming it.
 */
export class StoreOrdersClient {
  readonly v1: Client<V1Paths>;
  readonly v2: Client<V2Paths>;
  readonly admin: Client<AdminPaths>;
  readonly orders: Orders;
  #rateLimit: RateLimit | undefined;

  constructor(options: StoreOrdersClientOptions) {
    checkOptions(options);
    const send = options.fetch ?? ((request: Request) => fetch(request));
    const retried = retrying(send, { retry: options.retry, timeoutMs: options.timeout });
    const fetchExact: Fetch = async (request) => {
      const response = await retried(request);
      this.#rateLimit = rateLimitOf(response.headers);
      return withExactIds(response);
    };
    const root = withoutSlash(options.baseUrl);
    const common = {
      headers: { Authorization: `Bearer ${options.apiKey}` },
      fetch: fetchExact,
    };
    this.v1 = createClient<V1Paths>({ ...common, baseUrl: `${root}/v1` });
    this.v2 = createClient<V2Paths>({
      ...common,
      baseUrl: `${root}/v2`,
      // `status=pending,shipped`, as the API takes several statuses.
      querySerializer: { array: { style: 'form', explode: false } },
    });
    this.admin = createClient<AdminPaths>({
      ...common,
      baseUrl: withoutSlash(options.adminBaseUrl ?? root),
    });
    this.orders = new Orders(this.v1, this.v2);
  }

  /** The rate-limit headers of the last answer, or `undefined` if it had none. */
  get rateLimit(): RateLimit | undefined {
    return this.#rateLimit;
  }
}

function rateLimitOf(headers: Headers): RateLimit | undefined {
  const [limit, remaining, reset] = ['Limit', 'Remaining', 'Reset'].map((name) =>
    headers.get(`X-RateLimit-${name}`),
  );
  if (limit === null || remaining === null || reset === null) return undefined;
  return { limit: Number(limit), remaining: Number(remaining), reset: Number(reset) };
}
