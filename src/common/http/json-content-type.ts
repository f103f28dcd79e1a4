import { constantHeaderSetter } from '../../platform/response-header';

/** The Content-Type of the service's JSON bodies, as Express's `res.type('application/json')` has it. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Sets `Content-Type: application/json; charset=utf-8` with the service's own header setters, as
 * every other header of a successful answer is set. Through Express (`res.type()`), Node's
 * `setHeader` would be left storing this one name alone, a fresh lowercased string each time: V8
 * then misses that store's inline cache on every response (docs/performance.md).
 */
export const setJsonContentType = constantHeaderSetter('Content-Type', JSON_CONTENT_TYPE);
