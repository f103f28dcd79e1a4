/**
 * The cursor of a page of the audit trail: the id of the last event sent, base64url-encoded. Opaque
 * to clients, but not secret: the trail is shown only to operators, and a made-up cursor only
 * starts a page at another event. Pages are newest first, so the next page holds the events with
 * a smaller id.
 */

import { fromBase64url, toBase64url } from '../common/base64url';

/** A cursor that is not one a page of the trail handed out. */
export class InvalidAuditCursorError extends Error {
  constructor() {
    super('cursor is not one that a page of the audit trail handed out');
  }
}

const INT64_MAX = 2n ** 63n - 1n;

export function encodeAuditCursor(lastId: string): string {
  return toBase64url(`audit:${lastId}`);
}

/** The id of the last event of the page before; throws InvalidAuditCursorError. */
export function decodeAuditCursor(cursor: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) throw new InvalidAuditCursorError();
  const id = /^audit:([1-9][0-9]{0,18})$/.exec(fromBase64url(cursor) ?? '')?.[1];
  // Only the one spelling this module writes: base64url decoding forgives others.
  if (id === undefined || BigInt(id) > INT64_MAX || encodeAuditCursor(id) !== cursor) {
    throw new InvalidAuditCursorError();
  }
  return id;
}
