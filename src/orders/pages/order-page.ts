import type { Request, Response } from 'express';
import { sendJson } from '../../common/http/send-json-stream';
import { orderJson } from '../order-json';
import type { OrderPageRow } from './order-page.sql';

/** One page of `GET /v2/store/orders`: its orders, and the cursor of the next page if any. */
export interface OrderPage {
  rows: OrderPageRow[];
  /** Present exactly when there are more orders after these. */
  nextCursor?: string;
}

/**
 * The page as the API documents it: `{"data":[Order…],"hasMore":…,"nextCursor":…}`, each order by
 * the one mapper that v1 uses too (exact int64, nulls left out). A cursor is base64url: no escaping.
 */
export function orderPageJson(page: OrderPage): string {
  let data = '';
  for (const [id, petId, quantity, shipDate, complete, status] of page.rows) {
    if (data !== '') data += ',';
    data += orderJson([
      id,
      petId,
      quantity,
      shipDate && millisecondsOf(shipDate),
      complete,
      status,
    ]);
  }
  return page.nextCursor === undefined
    ? `{"data":[${data}],"hasMore":false}`
    : `{"data":[${data}],"hasMore":true,"nextCursor":"${page.nextCursor}"}`;
}

/**
 * An exact ship date (`…:SS.ffffffZ`) as the Order JSON gives it, in milliseconds (`…:SS.fffZ`),
 * truncated like PostgreSQL's `MS`: v1's list and v2's pages write the same instant alike. One
 * formatted date per row from the database, not two.
 */
function millisecondsOf(exact: string): string {
  return `${exact.slice(0, -4)}Z`;
}

/**
 * `Link: <absolute URL of the next page>; rel="next"` (RFC 8288): this request's URL, as the client
 * reached it (with TRUST_PROXY, as the proxy says), its query kept but for the new cursor.
 */
export function nextPageLink(req: Request, search: string, nextCursor: string): string {
  const query = new URLSearchParams(search);
  query.set('cursor', nextCursor);
  const path = req.originalUrl.split('?')[0];
  return `<${req.protocol}://${req.host}${path}?${query.toString()}>; rel="next"`;
}

/**
 * Answers 200 with the page, and its `Link` to the next one when there is more. A `HEAD` gets the
 * same head, `Link` included, and the page is never written out as JSON (see `sendJson`).
 */
export function sendOrderPage(res: Response, search: string, page: OrderPage): void {
  if (page.nextCursor !== undefined) {
    res.setHeader('Link', nextPageLink(res.req, search, page.nextCursor));
  }
  sendJson(res, () => orderPageJson(page));
}
