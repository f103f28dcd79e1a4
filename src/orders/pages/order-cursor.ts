import { createHmac, timingSafeEqual } from 'node:crypto';
import { fromBase64url, toBase64url } from '../../common/base64url';
import { ApiException } from '../../common/errors/api.exception';
import { OrderErrors } from '../order.errors';
import { parseInt64 } from '../../common/int64';
import type { OrderFilter, OrderSort } from './order-page-query';

/**
 * Where the scan of a page stopped, in the page's sort: the last order it examined (returned or
 * not). `shipDate` only in the shipDate sorts: the exact instant (microseconds, canonical UTC
 * form) or null for an order without one.
 */
export interface OrderPosition {
  id: string;
  shipDate?: string | null;
}

/**
 * 2: signed with the deployment's secret. Version 1 cursors carried an unkeyed digest anyone
 * could compute, so none of them can be told from a forged one: they are refused.
 */
const VERSION = 2;
/** The exact ship date a cursor carries, as order-page.sql.ts selects it. */
const SHIP_DATE = /^(\d{4,6})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/;
/** Characters of the signature: 96 bits of HMAC-SHA-256, base64url. */
const SIGNATURE_LENGTH = 16;

const sign = (key: Buffer, text: string): string =>
  createHmac('sha256', key).update(text).digest('base64url').slice(0, SIGNATURE_LENGTH);

/**
 * What a cursor is bound to: the filters (in canonical form, so `status=shipped,pending` and
 * `status=pending,shipped` are the same) and the sort. Not the limit, which may change per page.
 * Keyed too, so that it tells nothing about the filters to whoever holds a cursor.
 */
function bindingOf(key: Buffer, filter: OrderFilter, sort: OrderSort): string {
  return sign(
    key,
    JSON.stringify([
      'binding',
      sort,
      filter.statuses ?? null,
      filter.petId ?? null,
      filter.complete ?? null,
      filter.shipDateFrom ?? null,
      filter.shipDateTo ?? null,
    ]),
  );
}

const isShipDateSort = (sort: OrderSort): boolean => sort === 'shipDate' || sort === '-shipDate';

/**
 * The cursor of the page after `position`: base64url of
 * `[version, binding, id, shipDate?, signature]`, the signature an HMAC of the rest with the
 * deployment's cursor secret (`key`), so that a cursor cannot be made by hand, altered, or
 * carried to another deployment. The id is a string, so it stays exact over the whole int64 range.
 */
export function encodeCursor(
  key: Buffer,
  filter: OrderFilter,
  sort: OrderSort,
  position: OrderPosition,
): string {
  const payload: unknown[] = [VERSION, bindingOf(key, filter, sort), position.id];
  if (isShipDateSort(sort)) payload.push(position.shipDate ?? null);
  const json = JSON.stringify(payload);
  return toBase64url(`${json.slice(0, -1)},"${sign(key, json)}"]`);
}

const invalidCursor = (message: string): ApiException =>
  new ApiException(OrderErrors.INVALID_CURSOR, message);

/**
 * The position a cursor names, for the filters and sort of this request. A cursor that this
 * deployment did not sign, or that was altered, or was issued for other filters or another sort,
 * is 400 `INVALID_CURSOR`; so is one whose values could not have been written by this service (an
 * id out of int64, a ship date that is no instant), checked before anything reaches SQL.
 */
export function decodeCursor(
  key: Buffer,
  cursor: string,
  filter: OrderFilter,
  sort: OrderSort,
): OrderPosition {
  const malformed = invalidCursor(
    'cursor is malformed, altered or from another deployment: pass the nextCursor of the ' +
      'previous page unchanged',
  );
  const json = fromBase64url(cursor);
  // Decoding ignores stray bits: only a cursor that encodes back to itself is one we wrote.
  if (json === undefined || toBase64url(json) !== cursor) throw malformed;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw malformed;
  }
  if (!Array.isArray(parsed) || parsed.length < 2) throw malformed;
  const signature: unknown = parsed[parsed.length - 1];
  const payload: unknown[] = parsed.slice(0, -1);
  if (typeof signature !== 'string' || !sameText(signature, sign(key, JSON.stringify(payload)))) {
    throw malformed;
  }

  const [version, binding, id, shipDate] = payload;
  if (version !== VERSION) throw malformed;
  if (
    binding !== bindingOf(key, filter, sort) ||
    payload.length !== (isShipDateSort(sort) ? 4 : 3)
  ) {
    throw invalidCursor(
      'cursor was issued for other filters or another sort: keep every parameter but limit ' +
        'as it was on the first page',
    );
  }
  if (typeof id !== 'string' || parseInt64(id) !== id) throw malformed;
  if (!isShipDateSort(sort)) return { id };
  if (shipDate !== null && (typeof shipDate !== 'string' || !isInstant(shipDate))) throw malformed;
  return { id, shipDate };
}

/** Compares in constant time, so that a signature cannot be guessed byte by byte. */
function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether a ship date in the cursor's form names a real instant that PostgreSQL takes: year 1 on,
 * a month 1..12, a day that month has, a time of day. `2026-02-30`, month 13 or year 0000 are not.
 */
function isInstant(text: string): boolean {
  const match = SHIP_DATE.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  if (year < 1 || hour > 23 || minute > 59 || second > 59) return false;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  );
}
