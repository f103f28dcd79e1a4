import { Inject, Injectable } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import onHeaders from 'on-headers';
import { ApiKeyAuthenticator } from '../auth/api-key.authenticator';
import { isPublicRoute } from '../auth/public.decorator';
import { ApiException } from '../common/errors/api.exception';
import { RouteTable } from '../common/http/route-table';
import { RateLimitService } from '../rate-limit/rate-limit.service';
import { AdmissionControl, type Criticality } from './admission-control';
import { OverloadErrors } from './overload.errors';
import { overloadSettings, type OverloadSettings } from './overload.settings';
import { ShedReport } from './shed-report';

/** Methods that change nothing: a read is shed before a write. */
const READS = new Set(['GET', 'HEAD']);

/** What the door knows of a route: its pattern (the metric's label) and whether it is public. */
interface DoorRoute {
  pattern: string;
  isPublic: boolean;
  matches: (path: string) => boolean;
}

const OVERLOADED_BODY = JSON.stringify(new ApiException(OverloadErrors.OVERLOADED).toBody());

/**
 * Admission control at the door: the API's first Express middleware (`configureApp`), before
 * the request observer, Nest's router, guards, interceptors and any database work, so that a
 * refusal costs little more than Node's parsing of the request. A public route (the health
 * probes) and a path no route serves go on as usual; any other request is let in while the
 * requests in flight stay under its criticality's share of the adaptive limit
 * ({@link AdmissionControl}), else answered at once: 503 `OVERLOADED` with `Retry-After`, the
 * request's id, the security headers and, uncounted, the rate-limit headers. A refusal is not in the request log
 * nor in `http_requests_total`: {@link ShedReport} counts it and writes one line per interval.
 *
 * The criticality comes from the method and from what the key cache already knows of the key: a
 * key it does not know is judged at the door as no key, since deciding it could take a lookup.
 * The admin listener is set up without this middleware, and `/metrics` has a listener of its own.
 */
@Injectable()
export class AdmissionMiddleware {
  /** Whether requests are refused at all (`OVERLOAD_SHEDDING`). */
  readonly enabled: boolean;
  private readonly retryAfter: string;
  /** The routes by method, read from the route table on the first request (all are mounted). */
  private byMethod?: Map<string, DoorRoute[]>;

  constructor(
    private readonly admission: AdmissionControl,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly rateLimit: RateLimitService,
    private readonly report: ShedReport,
    private readonly routes: RouteTable,
    @Inject(overloadSettings.KEY) settings: OverloadSettings,
  ) {
    this.enabled = settings.OVERLOAD_SHEDDING === 'on';
    this.retryAfter = String(settings.OVERLOAD_RETRY_AFTER_SECONDS);
  }

  /**
   * The middleware; `setAnswerHeaders` sets what every API response carries besides (its id,
   * the security headers), for the refusals, which meet no later middleware.
   */
  handler(setAnswerHeaders: (req: Request, res: Response) => void): RequestHandler {
    return (req: Request, res: Response, next: NextFunction): void => {
      const route = this.routeOf(req);
      if (route === undefined || route.isPublic) {
        next();
        return;
      }
      const criticality = this.criticalityOf(req);
      if (criticality === 'sheddable') {
        if (this.admission.admitsSheddable()) {
          next();
          return;
        }
      } else {
        const admittedAt = this.admission.tryAcquire(criticality);
        if (admittedAt !== undefined) {
          this.releaseWhenAnswered(res, admittedAt);
          next();
          return;
        }
      }
      this.report.shed(route.pattern, criticality);
      setAnswerHeaders(req, res);
      this.refuse(req, res).catch(next);
    };
  }

  private async refuse(req: Request, res: Response): Promise<void> {
    await this.rateLimit.reportUncounted(req, res);
    res.statusCode = OverloadErrors.OVERLOADED.status;
    res.setHeader('Retry-After', this.retryAfter);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(OVERLOADED_BODY));
    res.end(OVERLOADED_BODY);
  }

  /**
   * A request holds its place until its response starts (or the connection closes first): a
   * list streamed to a client that reads slowly is then the client's pace, bounded by the stall
   * timeout, and holds no place of the limit meanwhile.
   */
  private releaseWhenAnswered(res: Response, admittedAt: number): void {
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.admission.release(admittedAt);
    };
    onHeaders(res, release);
    res.once('close', release);
  }

  private criticalityOf(req: Request): Criticality {
    this.authenticator.authenticateFromCache(req);
    if (req.auth === undefined) return 'sheddable';
    return READS.has(req.method) ? 'default' : 'critical';
  }

  /** The route a request will meet, matched as Express's router will (`HEAD` by `GET`'s). */
  private routeOf(req: Request): DoorRoute | undefined {
    this.byMethod ??= this.readRoutes();
    const candidates = this.byMethod.get(req.method === 'HEAD' ? 'GET' : req.method);
    if (candidates === undefined) return undefined;
    const url = req.url;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    return candidates.find((route) => route.matches(path));
  }

  private readRoutes(): Map<string, DoorRoute[]> {
    const byMethod = new Map<string, DoorRoute[]>();
    for (const { method, path, controller, handler, matches } of this.routes.matchers) {
      const prototype = controller.prototype as Record<string, object>;
      const routes = byMethod.get(method) ?? [];
      routes.push({
        pattern: path,
        isPublic: isPublicRoute(prototype[handler], controller),
        matches: (candidate) => matches(candidate) !== false,
      });
      byMethod.set(method, routes);
    }
    return byMethod;
  }
}
