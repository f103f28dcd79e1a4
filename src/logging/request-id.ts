import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { headerSetter } from '../platform/response-header';
import { mayBeSecret } from './redact';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const setRequestIdHeader = headerSetter('X-Request-Id');

/**
 * Whether a caller's X-Request-Id may be the request's id: a token of `[A-Za-z0-9._:-]`, at most
 * 128 long (so no log line needs to escape it), that cannot be a secret ({@link mayBeSecret}). The
 * id is logged with every line of the request and kept in the audit trail: a key sent as one
 * would be logged verbatim.
 */
export function isSafeRequestId(id: string): boolean {
  return REQUEST_ID.test(id) && !mayBeSecret(id);
}

/**
 * The request's id (`req.id`): the caller's X-Request-Id when it is safe ({@link isSafeRequestId}),
 * else a new UUID; echoed on the response, so a caller whose id was refused sees the one its
 * request was logged under. Given once, by the request observer, and reused by every later caller.
 */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const assigned = (req as { id?: unknown }).id;
  if (typeof assigned === 'string') return assigned;
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && isSafeRequestId(given) ? given : randomUUID();
  setRequestIdHeader(res, id);
  (req as { id?: string }).id = id;
  return id;
}
