import createClient, { type Client } from 'openapi-fetch';
import type { paths as AdminPaths } from './generated/admin.js';
import type { paths as V1Paths } from './generated/v1.js';
import type { components as V2Components, paths as V2Paths } from './generated/v2.js';
import { StoreOrdersError } from './errors.js';
import { withExactIds } from './exact-json.js';
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
  /** Retries of 429 and 503 (see {@link RetryOptions}); `false`: none. */
  retry?: RetryOptions | false;
  /** The fetch to send requests with (default: the global `fetch`). */
  fetch?: Fetch;
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
  async list(): Promise<Order[]> {
    return dataOf(await this.v1.GET('/store/orders'));
  }

  /** One page of the filtered orders, after `cursor` (`GET /v2/store/orders`). */
  async page(filters: OrderFilters = {}, cursor?: string): Promise<OrderPage> {
    const { status, petId, ...rest } = filters;
    const query: PageQuery = {
      ...rest,
      ...(status !== undefined && { status: typeof status === 'string' ? [status] : [...status] }),
      ...(petId !== undefined && { petId: int64(petId) }),
      ...(cursor !== undefined && { cursor }),
    };
    return dataOf(await this.v2.GET('/store/orders', { params: { query } }));
  }

  /**
   * Every order matching the filters, page after page following `nextCursor` until `hasMore` is
   * false: a page may be short, even empty, before the last one.
   */
  async *each(filters: OrderFilters = {}): AsyncGenerator<Order, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.page(filters, cursor);
      yield* page.data;
      cursor = page.hasMore ? page.nextCursor : undefined;
    } while (cursor !== undefined);
  }

  /**
   * Cancels a pending order (`DELETE /v2/store/orders/{orderId}`); resolves when it is cancelled,
   * as it does for one cancelled before. A shipped order is a `StoreOrdersError` 409
   * `ORDER_ALREADY_SHIPPED`, an unknown one 404 `ORDER_NOT_FOUND`.
   */
  async cancel(id: OrderId): Promise<void> {
    dataOf(
      await this.v2.DELETE('/store/orders/{orderId}', { params: { path: { orderId: int64(id) } } }),
    );
  }
}

/**
 * The Store Orders API: `orders` for what most clients do, and the typed operations of each
 * document for the rest (`v1`, `v2`, `admin`: openapi-fetch clients, answering `{data, error,
 * response}`). Every request carries the key, is retried on 429 and 503 as `retry` says, and
 * reads int64 ids as exact strings.
 */
export class StoreOrdersClient {
  readonly v1: Client<V1Paths>;
  readonly v2: Client<V2Paths>;
  readonly admin: Client<AdminPaths>;
  readonly orders: Orders;
  #rateLimit: RateLimit | undefined;

  constructor(options: StoreOrdersClientOptions) {
    const send = options.fetch ?? ((request: Request) => fetch(request));
    const retried = retrying(send, options.retry);
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
