import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { httpRequestOf } from './http-context';

/**
 * The request's query string as the client sent it, without the `?` (empty when there is none).
 * For handlers that must see repeats and exact spellings, which Express's parsed `req.query`
 * folds away. Combine with a pipe that parses it.
 */
export const RawQuery = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const url = httpRequestOf(context).originalUrl;
  const start = url.indexOf('?');
  return start === -1 ? '' : url.slice(start + 1);
});
