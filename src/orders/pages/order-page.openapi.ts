import type { ApiQueryOptions } from '@nestjs/swagger';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, ORDER_SORTS } from './order-page-query';
import { ORDER_STATUSES } from '../order-status';

const STRICT =
  'Given at most once and never empty; anything out of these rules is 400 `INVALID_QUERY`.';

/** The query parameters of `GET /v2/store/orders` in the OpenAPI document (order-page-query.ts). */
export const ORDER_PAGE_QUERY_PARAMETERS = {
  status: {
    name: 'status',
    required: false,
    description:
      'Orders in any of these statuses: one or more of `pending`, `shipped`, `cancelled`, ' +
      `comma-separated, each at most once. ${STRICT}`,
    schema: {
      type: 'array',
      items: { type: 'string', enum: [...ORDER_STATUSES] },
      minItems: 1,
      maxItems: ORDER_STATUSES.length,
      uniqueItems: true,
    },
    style: 'form',
    explode: false,
    examples: {
      pending: { summary: 'Orders still to ship', value: ['pending'] },
      settled: { summary: 'Shipped or cancelled orders', value: ['shipped', 'cancelled'] },
    },
  },
  petId: {
    name: 'petId',
    required: false,
    description: `Orders of this pet: a base-10 int64. ${STRICT}`,
    schema: { type: 'integer', format: 'int64' },
    examples: { pet: { summary: 'The orders of pet 198772', value: 198772 } },
  },
  complete: {
    name: 'complete',
    required: false,
    description: `Orders that are (\`true\`) or are not (\`false\`) complete. ${STRICT}`,
    schema: { type: 'boolean' },
    examples: { open: { summary: 'Orders not yet complete', value: false } },
  },
  shipDateFrom: {
    name: 'shipDateFrom',
    required: false,
    description:
      'Orders shipping at or after this instant: an RFC 3339 date-time with an offset (`Z` or ' +
      '`±hh:mm`; in a URL write `+` as `%2B`). Must be before `shipDateTo`. An order without a ' +
      `ship date never matches. ${STRICT}`,
    schema: { type: 'string', format: 'date-time' },
    examples: {
      utc: { summary: 'In UTC', value: '2026-11-22T00:00:00Z' },
      offset: { summary: 'With an offset', value: '2026-11-22T00:00:00+01:00' },
    },
  },
  shipDateTo: {
    name: 'shipDateTo',
    required: false,
    description:
      'Orders shipping before this instant (exclusive): an RFC 3339 date-time with an offset. ' +
      `Must be after \`shipDateFrom\`. An order without a ship date never matches. ${STRICT}`,
    schema: { type: 'string', format: 'date-time' },
    examples: { utc: { summary: 'In UTC', value: '2026-11-29T00:00:00Z' } },
  },
  sort: {
    name: 'sort',
    required: false,
    description:
      'The order of the pages: by `id` or `shipDate`, ascending, or descending with a `-`. Ties ' +
      'are broken by id in the same direction; orders without a ship date come last in both ' +
      `shipDate sorts. ${STRICT}`,
    schema: { type: 'string', enum: [...ORDER_SORTS], default: 'id' },
    examples: {
      newest: { summary: 'Newest orders first', value: '-id' },
      shipsNext: { summary: 'What ships next', value: 'shipDate' },
    },
  },
  limit: {
    name: 'limit',
    required: false,
    description: `The most orders on a page, from 1 to ${MAX_PAGE_LIMIT}. It may change from one page to the next. ${STRICT}`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT },
    examples: { ten: { summary: 'Ten orders a page', value: 10 } },
  },
  cursor: {
    name: 'cursor',
    required: false,
    description:
      'The `nextCursor` of the previous page, unchanged, with the same filters and sort (the ' +
      'limit may change): the page after it. Opaque, signed by the deployment; it does not ' +
      'expire. A cursor that is malformed, altered, made by hand, from another deployment, or ' +
      'was issued for other filters or another sort is 400 `INVALID_CURSOR`. Without it: the ' +
      'first page.',
    // No example to pre-fill: Swagger UI's "Try it out" would send it, and a cursor is only
    // valid with the filters and sort it was issued for. One looks like `WzEsImxEMFFq…`.
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
  },
} satisfies Record<string, ApiQueryOptions>;
