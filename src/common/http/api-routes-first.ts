import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Express } from 'express';
import { isVersionedPath } from './versioning';

/**
 * What this reads of a layer of Express 5's router (the `router` package): its own, undocumented
 * shape. `rawPath` is the path a middleware is mounted on (`/` for every path), `route` the route a
 * route layer serves.
 */
export interface RouterLayer {
  rawPath?: unknown;
  route?: { path: unknown };
}

/** A path without parameters or wildcards: the only ones this moves. */
const LITERAL_PATH = /^\/[\w.~/-]*$/;

/** A route of an API version (`/v1/...`): a controller's route under URI versioning. */
function isApiRoute(layer: RouterLayer): boolean {
  const path = layer.route?.path;
  return typeof path === 'string' && isVersionedPath(path);
}

/**
 * A route, or a middleware mounted on a path, that no request to an API version can reach: a
 * literal path outside every version (`/docs`, `/openapi.json`, `/health/live`).
 */
function isOutsideTheApi(layer: RouterLayer): boolean {
  const path = layer.route ? layer.route.path : layer.rawPath;
  return (
    typeof path === 'string' &&
    path !== '/' &&
    LITERAL_PATH.test(path) &&
    !isVersionedPath(`${path.replace(/\/$/, '')}/`)
  );
}

/**
 * Reorders `stack` in place: the layers before the first API route that no API request can reach
 * go right after the last API route, in the order they had. Every other layer keeps its place
 * (middleware for every path, or for a path an API request can match, stays before the routes).
 */
export function moveApiRoutesFirst(stack: RouterLayer[]): void {
  const first = stack.findIndex(isApiRoute);
  const last = stack.findLastIndex(isApiRoute);
  if (first < 0) return;
  const before = stack.slice(0, first);
  const moved = before.filter(isOutsideTheApi);
  if (moved.length === 0) return;
  const kept = before.filter((layer) => !isOutsideTheApi(layer));
  stack.splice(0, last + 1, ...kept, ...stack.slice(first, last + 1), ...moved);
}

/**
 * Serves the API's routes before Swagger UI, the OpenAPI documents and the health probes.
 *
 * Express tries its router's layers in order, testing each one's path against the request's.
 * `configureApp` mounts the documents and Swagger UI before Nest registers the controllers'
 * routes, and the health controller's module comes before the features': so each API request
 * was tested against 13 layers it could never match, about 3,000 instructions per request on the
 * event loop (valgrind, 1.3% of a cancel: docs/performance.md). Once the application is assembled
 * (every route and Nest's not-found handler registered), those layers move after the API routes.
 * Their paths and the API's never overlap, so every request is served by the same handler as
 * before, and a path no route has still reaches the not-found handler last.
 *
 * The layers are the router's private `stack`: Express has no public way to order routes other
 * than by registering them in that order, which Nest decides.
 */
@Injectable()
export class ApiRoutesFirst implements OnApplicationBootstrap {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onApplicationBootstrap(): void {
    const app = this.adapterHost.httpAdapter.getInstance<Express>();
    moveApiRoutesFirst(app.router.stack);
  }
}
