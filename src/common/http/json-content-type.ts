import { constantHeaderSetter } from '../../platform/response-header';

/**
 * Sets `Content-Type: application/json; charset=utf-8` with the service's own header setters, as
 * every other header of a successful answer is set. Through Express (`res.type()`), Node's
 * `setHeader` would be left storing this one name alone, a fresh lowercased string each time: V8
 * then misses that store's inline cache on every response (docs/performance.md).
 */
export const setJsonContentType = constantHeaderSetter(
  'Content-Type',
  // What Express's `res.type('application/json')` sets.
  'application/json; charset=utf-8',
);
