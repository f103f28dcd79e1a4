import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { constantHeaderSetter } from '../../platform/response-header';

type HeaderList = readonly (readonly [string, string])[];

/**
 * The headers that `middleware` sets on a response, whatever the request: run once, at start,
 * against a response that only records them. For a middleware configured with constants (helmet
 * with static directives), so that each response then gets them from one loop over a list,
 * instead of from the middleware's own chain of sub-middleware.
 */
export function headersSetBy(middleware: RequestHandler): HeaderList {
  const headers = new Map<string, string>();
  const recorder = {
    setHeader: (name: string, value: unknown) => headers.set(name, String(value)),
    removeHeader: (name: string) => headers.delete(name),
    getHeader: (name: string) => headers.get(name),
  };
  let passedOn = false as boolean;
  void middleware(
    { method: 'GET', url: '/', headers: {} } as Request,
    recorder as unknown as Response,
    () => {
      passedOn = true;
    },
  );
  if (!passedOn) throw new Error('the header middleware did not pass the request on at once');
  return [...headers];
}

/** Sets a precomputed list of headers (see {@link headersSetBy}) on every response. */
export function setStaticHeaders(headers: HeaderList): RequestHandler {
  const setters = headers.map(([name, value]) => constantHeaderSetter(name, value));
  return (_req: Request, res: Response, next: NextFunction): void => {
    for (const set of setters) set(res);
    next();
  };
}
