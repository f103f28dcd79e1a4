import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import onHeaders from 'on-headers';
import { ApiKeyAuthenticator } from '../auth/api-key.authenticator';
import { isPublic } from '../auth/public.decorator';
import { ApiException } from '../common/errors/api.exception';
import { httpRequestOf, httpResponseOf } from '../common/http/http-context';
import { routeOf } from '../common/http/route-of';
import { AdmissionControl, type Criticality } from './admission-control';
import { OverloadErrors } from './overload.errors';
import { overloadSettings, type OverloadSettings } from './overload.settings';
import { ShedReport } from './shed-report';

/** Methods that change nothing: a read is shed before a write. */
const READS = new Set(['GET', 'HEAD']);

/**
 * First of the API's guards: admission control, before any database work. A public route (the
 * health probes) is always let in; any other request is let in while the requests in flight stay
 * under its criticality's share of the adaptive limit ({@link AdmissionControl}), else refused
 * at once with 503 `OVERLOADED` and `Retry-After`. The criticality is read from the method and
 * from what the key cache already knows of the key: deciding an unknown key could take a lookup.
 * The admin listener has no such guard, and `/metrics` has a listener of its own.
 */
@Injectable()
export class AdmissionGuard implements CanActivate {
  private readonly enabled: boolean;
  private readonly retryAfter: string;

  constructor(
    private readonly admission: AdmissionControl,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly report: ShedReport,
    @Inject(overloadSettings.KEY) settings: OverloadSettings,
  ) {
    this.enabled = settings.OVERLOAD_SHEDDING === 'on';
    this.retryAfter = String(settings.OVERLOAD_RETRY_AFTER_SECONDS);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.enabled || isPublic(context)) return true;
    const req = httpRequestOf(context);
    const criticality = this.criticalityOf(req);
    if (criticality === 'sheddable') {
      if (this.admission.admitsSheddable()) return true;
    } else {
      const admittedAt = this.admission.tryAcquire(criticality);
      if (admittedAt !== undefined) {
        this.releaseWhenAnswered(httpResponseOf(context), admittedAt);
        return true;
      }
    }
    // A key the cache does not know stays unchecked: the refusal's rate-limit headers count it
    // as anonymous, and no lookup is made for a request that is not served.
    if (req.auth === undefined) req.authFailure ??= 'unavailable';
    this.report.shed(routeOf(req), criticality);
    throw new ApiException(OverloadErrors.OVERLOADED, undefined, {
      'Retry-After': this.retryAfter,
    });
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
}
