import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Express middlewares run in turn as one layer of the router: each passes on to the next through
 * `next` as usual (at once, or later), and an error passed to `next` skips the rest and goes to
 * Express's error handling. For what every request goes through before routing (`configureApp`):
 * each router layer costs a match, a `next` of the router's own and a promise check per request
 * (measured in docs/performance.md).
 */
export function inOneLayer(steps: readonly RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error != null) {
        next(error);
        return;
      }
      if (index === steps.length) next();
      else void steps[index++](req, res, step);
    };
    step();
  };
}
