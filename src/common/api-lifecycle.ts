import {
  Injectable,
  type MiddlewareConsumer,
  RequestMethod,
  SetMetadata,
  type Type,
} from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import onHeaders from 'on-headers';
import { match, type MatchFunction } from 'path-to-regexp';
import { ApiException } from './errors/api.exception';
import { CommonErrors } from './errors/error-code';
import { ErrorResponseHook } from './errors/error-response-hook';
import { RouteTable, type ServedRoute } from './http/route-table';
import { RouteDecorators } from './http/route-metadata';
import { versionPrefix } from './http/versioning';

/** How settled a route is, short of stable (the default, which carries no marker). */
export type StabilityMarker = 'experimental' | 'beta';

/** What a module writes: `@Deprecated({ since: '2026-12-01', sunset: '2027-06-01', link })`. */
export interface DeprecationOptions {
  /** The day (UTC) the route is deprecated from, `YYYY-MM-DD`. */
  since: string;
  /** The day (UTC) from which it answers 410 `GONE`, `YYYY-MM-DD`. */
  sunset: string;
  /** The URL of the migration notes (absolute, or a path on this server). */
  link?: string;
}

/** A deprecation as the responses and the document show it, worked out once per route. */
export interface RouteDeprecation extends DeprecationOptions {
  /** Midnight UTC of the sunset, in milliseconds: from then on the route is gone. */
  sunsetAt: number;
  /** `Deprecation: @<Unix seconds of since>` (RFC 9745). */
  deprecationHeader: string;
  /** `Sunset: <HTTP-date>` (RFC 8594). */
  sunsetHeader: string;
  /** `<link>; rel="deprecation"` (RFC 9745 §3), when there is a link. */
  linkHeader?: string;
}

/** A route's markers: its own, else its controller's. Undefined for a route with none. */
export interface RouteLifecycle {
  stability?: StabilityMarker;
  deprecation?: RouteDeprecation;
}

/**
 * The shortest notice a deprecation gives before its sunset, in months (docs/api.md, "Stability
 * and deprecation"): a marker with less is refused when its file is loaded.
 */
export const MIN_DEPRECATION_MONTHS = 6;

const STABILITY_KEY = 'store-orders:stability';
const DEPRECATION_KEY = 'store-orders:deprecation';
const STABILITY_MARKERS: readonly string[] = ['experimental', 'beta'] satisfies StabilityMarker[];

/**
 * Marks a route, or every route of a controller, `experimental` or `beta`: its operation shows
 * `x-stability` in the OpenAPI document and its responses carry `X-API-Stability`.
 */
export function Stability(marker: StabilityMarker): ClassDecorator & MethodDecorator {
  if (!STABILITY_MARKERS.includes(marker)) {
    throw new Error(
      `@Stability: "${marker as string}" is not one of ${STABILITY_MARKERS.join(', ')}`,
    );
  }
  return SetMetadata(STABILITY_KEY, marker);
}

/**
 * Deprecates a route, or every route of a controller, with its sunset date: the
 * operation is `deprecated` in the OpenAPI document with its sunset in the description; every
 * response carries `Deprecation`, `Sunset` and, with a link, `Link: <link>; rel="deprecation"`;
 * from the sunset date (midnight UTC) on, the route answers 410 `GONE` with the same headers.
 * The dates are checked when the file is loaded: `YYYY-MM-DD`, and the sunset at least
 * {@link MIN_DEPRECATION_MONTHS} months after `since`.
 */
export function Deprecated(options: DeprecationOptions): ClassDecorator & MethodDecorator {
  return SetMetadata(DEPRECATION_KEY, routeDeprecation(options));
}

/** Midnight UTC of a `YYYY-MM-DD` day, in milliseconds; throws on anything else. */
function startOfDay(day: string, what: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  const at = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : NaN;
  // Date.UTC rolls 2026-02-30 over to March: only a day that exists comes back as written.
  if (Number.isNaN(at) || new Date(at).toISOString().slice(0, 10) !== day) {
    throw new Error(`@Deprecated: ${what} must be a day as YYYY-MM-DD, not "${day}"`);
  }
  return at;
}

function routeDeprecation(options: DeprecationOptions): RouteDeprecation {
  const { since, sunset, link } = options;
  const sinceAt = startOfDay(since, 'since');
  const sunsetAt = startOfDay(sunset, 'sunset');
  const earliest = new Date(sinceAt);
  earliest.setUTCMonth(earliest.getUTCMonth() + MIN_DEPRECATION_MONTHS);
  if (sunsetAt < earliest.getTime()) {
    throw new Error(
      `@Deprecated: the sunset (${sunset}) must be at least ${MIN_DEPRECATION_MONTHS} months ` +
        `after since (${since}), on or after ${earliest.toISOString().slice(0, 10)}`,
    );
  }
  if (link !== undefined && !/^(https?:\/\/|\/)[^\s<>"]+$/.test(link)) {
    throw new Error(`@Deprecated: link must be an http(s) URL or a path, not "${link}"`);
  }
  return {
    ...options,
    sunsetAt,
    deprecationHeader: `@${sinceAt / 1000}`,
    sunsetHeader: new Date(sunsetAt).toUTCString(),
    ...(link === undefined ? {} : { linkHeader: `<${link}>; rel="deprecation"` }),
  };
}

/** The markers of one handler of a controller: the handler's own, else the controller's. */
export function lifecycleOf(controller: Type, handler: string): RouteLifecycle | undefined {
  const method = (controller.prototype as Record<string, unknown>)[handler] as object;
  const route = new RouteDecorators(method, controller);
  const stability = route.get(STABILITY_KEY) as StabilityMarker | undefined;
  const deprecation = route.get(DEPRECATION_KEY) as RouteDeprecation | undefined;
  if (stability === undefined && deprecation === undefined) return undefined;
  return { ...(stability && { stability }), ...(deprecation && { deprecation }) };
}

/**
 * The middleware of one marked route, its headers worked out once. It runs before the guards, so
 * every answer of the route carries them, a 401 or a 429 too. The deprecation's `Link` is added
 * as the head is written (on-headers), after any `Link` the handler set, never in its place.
 * From the sunset on, the route answers 410 `GONE` before authentication, as an unknown path is
 * answered 404; the rate limiter counts it like any error raised before its guard.
 */
export function lifecycleMiddleware(
  lifecycle: RouteLifecycle,
  now: () => number = Date.now,
): RequestHandler {
  const setHeaders = lifecycleHeadersSetter(lifecycle);
  const sunsetAt = lifecycle.deprecation?.sunsetAt;
  return (_req: Request, res: Response, next: NextFunction): void => {
    setHeaders(res);
    if (sunsetAt !== undefined && now() >= sunsetAt) {
      next(new ApiException(CommonErrors.GONE));
      return;
    }
    next();
  };
}

/** Sets a marked route's headers on a response; the deprecation's `Link` as the head is written. */
function lifecycleHeadersSetter({
  stability,
  deprecation,
}: RouteLifecycle): (res: Response) => void {
  const linkHeader = deprecation?.linkHeader;
  const addLink =
    linkHeader === undefined
      ? undefined
      : function (this: Response): void {
          const set = this.getHeader('Link');
          const links = set === undefined ? [] : Array.isArray(set) ? set : [String(set)];
          this.setHeader('Link', [...links, linkHeader].join(', '));
        };
  return (res) => {
    if (stability !== undefined) res.setHeader('X-API-Stability', stability);
    if (deprecation !== undefined) {
      res.setHeader('Deprecation', deprecation.deprecationHeader);
      res.setHeader('Sunset', deprecation.sunsetHeader);
      if (addLink) onHeaders(res, addLink);
    }
  };
}

/** The marked routes of the application, each with its path matcher and header setter. */
interface MarkedRoute {
  method: string;
  matches: MatchFunction<object>;
  setHeaders: (res: Response) => void;
}

/**
 * The markers' headers on errors answered before a marked route's middleware ran: a body over
 * 16 KiB (413) or one that cannot be read (400), refused by the body limit before routing. Only
 * on the error path, and only when some route is marked; an error after the middleware already
 * has the headers.
 */
@Injectable()
@ErrorResponseHook()
export class ApiLifecycleErrorsHook implements ErrorResponseHook {
  private marked?: MarkedRoute[];

  constructor(private readonly routes: RouteTable) {}

  beforeErrorResponse(_error: ApiException, req: Request, res: Response): Promise<undefined> {
    this.setLifecycleHeaders(req, res);
    return Promise.resolve(undefined);
  }

  private setLifecycleHeaders(req: Request, res: Response): void {
    this.marked ??= this.routes.routes.flatMap((route) => {
      const lifecycle = lifecycleOf(route.controller, route.handler);
      if (!lifecycle) return [];
      const matches = match(route.path, { decode: false, sensitive: true });
      return [{ method: route.method, matches, setHeaders: lifecycleHeadersSetter(lifecycle) }];
    });
    if (this.marked.length === 0) return;
    if (res.hasHeader('Deprecation') || res.hasHeader('X-API-Stability')) return;
    // Express answers HEAD with the GET route.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const route = this.marked.find((r) => r.method === method && r.matches(req.path) !== false);
    route?.setHeaders(res);
  }
}

/**
 * Gives each marked route its middleware, bound to its path, method and version: a route without
 * markers gets none, so the markers cost it nothing, and no marker is read per request.
 */
export function applyApiLifecycle(
  consumer: MiddlewareConsumer,
  routes: readonly ServedRoute[],
): void {
  for (const route of routes) {
    const lifecycle = lifecycleOf(route.controller, route.handler);
    if (!lifecycle) continue;
    const prefix = route.version === undefined ? '' : versionPrefix(route.version);
    consumer.apply(lifecycleMiddleware(lifecycle)).forRoutes({
      path: route.path.slice(prefix.length),
      method: RequestMethod[route.method as keyof typeof RequestMethod],
      ...(route.version === undefined ? {} : { version: route.version }),
    });
  }
}
