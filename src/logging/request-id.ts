import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { headerSetter } from '../common/http/response-header';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const setRequestIdHeader = headerSetter('X-Request-Id');

/**
 * The request's id (`req.id`): the caller's X-Request-Id when it is a sane token, else a new UUID;
 * echoed on the response. Given once, by the request observer, and reused by every later caller.
 */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const assigned = (req as { id?: unknown }).id;
  if (typeof assigned === 'string') return assigned;
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  setRequestIdHeader(res, id);
  (req as { id?: string }).id = id;
  return id;
}
