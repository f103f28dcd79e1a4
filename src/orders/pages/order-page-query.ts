import { ApiException } from '../../common/errors/api.exception';
import { OrderErrors } from '../order.errors';
import { parseInt64 } from '../../common/int64';
import { parseRfc3339 } from '../../common/rfc3339';
import { ORDER_STATUSES, OrderStatus } from '../order-status';

/** The sorts of a v2 page; ties are broken by id in the same direction. */
export const ORDER_SORTS = ['id', '-id', 'shipDate', '-shipDate'] as const;
export type OrderSort = (typeof ORDER_SORTS)[number];

export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

/** The filters of a v2 page, combined with AND. Absent: no condition. */
export interface OrderFilter {
  /** At least one, without repeats, in the order of ORDER_STATUSES. */
  statuses?: OrderStatus[];
  /** Exact decimal int64. */
  petId?: string;
  complete?: boolean;
  /** Instants in the canonical form of {@link parseRfc3339}: `from <= shipDate < to`. */
  shipDateFrom?: string;
  shipDateTo?: string;
}

/** `GET /v2/store/orders`, parsed: what the page must hold, and where it starts. */
export interface OrderPageQuery {
  filter: OrderFilter;
  sort: OrderSort;
  limit: number;
  /** The opaque cursor of the previous page, still undecoded (order-cursor.ts). */
  cursor?: string;
  /** The query string as the client sent it (without `?`): the next page's link keeps it. */
  search: string;
}

const PARAMETERS = [
  'status',
  'petId',
  'complete',
  'shipDateFrom',
  'shipDateTo',
  'sort',
  'limit',
  'cursor',
] as const;
type Parameter = (typeof PARAMETERS)[number];

const invalid = (message: string): ApiException =>
  new ApiException(OrderErrors.INVALID_QUERY, message);

/**
 * Parses the query string of `GET /v2/store/orders` strictly: an unknown parameter, a repeated
 * one, an empty value or a value out of its rules is 400 `INVALID_QUERY`, naming the parameter.
 * Read from the raw query string, not from Express's parsed `req.query`, which folds repeats into
 * arrays and nested objects (`a[b]=c`) that a strict API must refuse, not interpret.
 */
export function parseOrderPageQuery(search: string): OrderPageQuery {
  const values = new Map<Parameter, string>();
  for (const [name, value] of new URLSearchParams(search)) {
    if (!isParameter(name)) {
      throw invalid(
        `Unknown query parameter "${name}"; the parameters are ${PARAMETERS.join(', ')}`,
      );
    }
    if (values.has(name)) throw invalid(`${name} is given more than once; give it once`);
    if (value === '') throw invalid(`${name} is empty; give it a value or leave it out`);
    values.set(name, value);
  }

  const filter: OrderFilter = {};
  const status = values.get('status');
  if (status !== undefined) filter.statuses = parseStatuses(status);
  const petId = values.get('petId');
  if (petId !== undefined) {
    filter.petId = parseInt64(petId);
    if (filter.petId === undefined) {
      throw invalid('petId must be a base-10 integer in the int64 range');
    }
  }
  const complete = values.get('complete');
  if (complete !== undefined) {
    if (complete !== 'true' && complete !== 'false') {
      throw invalid('complete must be true or false');
    }
    filter.complete = complete === 'true';
  }
  for (const name of ['shipDateFrom', 'shipDateTo'] as const) {
    const value = values.get(name);
    if (value === undefined) continue;
    const instant = parseRfc3339(value);
    if (instant === undefined) {
      throw invalid(
        `${name} must be an RFC 3339 date-time with an offset, e.g. 2026-11-22T10:00:00Z ` +
          '(in a URL, write a + of the offset as %2B)',
      );
    }
    filter[name] = instant;
  }
  if (
    filter.shipDateFrom !== undefined &&
    filter.shipDateTo !== undefined &&
    filter.shipDateFrom >= filter.shipDateTo
  ) {
    throw invalid('shipDateFrom must be before shipDateTo');
  }

  const sort = values.get('sort') ?? 'id';
  if (!isSort(sort)) throw invalid(`sort must be one of ${ORDER_SORTS.join(', ')}`);

  const limitText = values.get('limit');
  let limit = DEFAULT_PAGE_LIMIT;
  if (limitText !== undefined) {
    limit = /^[0-9]{1,9}$/.test(limitText) ? Number(limitText) : 0;
    if (limit < 1 || limit > MAX_PAGE_LIMIT) {
      throw invalid(`limit must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
    }
  }

  return { filter, sort, limit, cursor: values.get('cursor'), search };
}

function parseStatuses(text: string): OrderStatus[] {
  const given = new Set<string>();
  for (const status of text.split(',')) {
    if (!isStatus(status)) {
      throw invalid(
        `status must be one or more of ${ORDER_STATUSES.join(', ')}, comma-separated; ` +
          `"${status}" is none of them`,
      );
    }
    if (given.has(status)) throw invalid(`status lists "${status}" more than once`);
    given.add(status);
  }
  return ORDER_STATUSES.filter((status) => given.has(status));
}

const isParameter = (name: string): name is Parameter =>
  (PARAMETERS as readonly string[]).includes(name);
const isSort = (value: string): value is OrderSort =>
  (ORDER_SORTS as readonly string[]).includes(value);
const isStatus = (value: string): value is OrderStatus =>
  (ORDER_STATUSES as readonly string[]).includes(value);
