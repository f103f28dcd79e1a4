import type { ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';

/*
 * The request and response of an HTTP execution context, read from its arguments (Express's
 * handler arguments: request, response, next). The same as `context.switchToHttp().getRequest()`
 * without the cost: `switchToHttp()` assigns three new closures to the context on every call, and
 * the guards of every request asked for it about six times.
 */

export function httpRequestOf(context: ExecutionContext): Request {
  return context.getArgByIndex<Request>(0);
}

export function httpResponseOf(context: ExecutionContext): Response {
  return context.getArgByIndex<Response>(1);
}
