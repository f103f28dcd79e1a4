import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { ApiKeysRepository } from '../auth/api-keys.repository';
import '../auth/request-auth';
import { Clock } from '../common/clock';
import { ApiException } from '../common/errors/api.exception';
import { headerSetter } from '../platform/response-header';
import { rateLimitSettings, type RateLimitSettings } from './rate-limit.settings';
import { MetricsService } from '../metrics/metrics.service';
import { clientAddressOf } from './client-address';
import {
  BanPolicy,
  keyTracker,
  RATE_LIMIT_STORAGE,
  RateLimitStorage,
  WindowSpec,
  WindowState,
} from './rate-limit.storage';
import { RateLimitErrors } from './rate-limit.errors';
import { windowsFor } from './rate-limit.windows';

declare module 'express-serve-static-core' {
  interface Request {
    /**
     * Set once the request has been counted, so no layer counts it twice; or when a public route
     * serves it, which is never counted.
     */
    rateLimited?: boolean;
  }
}

/**
 * Per-plan limits: a request is admitted only if both of its windows have room; every response
 * says where the binding window stands; a client that keeps sending after its 429s is banned.
 */
@Injectable()
export class RateLimitService {
  /** A key's ban is kept in the database, where `keys unban` lifts it; an IP's in the storage. */
  private readonly keyBan: BanPolicy;
  private readonly ipBan: BanPolicy;
  private readonly banMs: number;

  constructor(
    @Inject(RATE_LIMIT_STORAGE) private readonly storage: RateLimitStorage,
    private readonly keys: ApiKeysRepository,
    @Inject(rateLimitSettings.KEY) settings: RateLimitSettings,
    private readonly metrics: MetricsService,
    @InjectPinoLogger(RateLimitService.name) private readonly logger: PinoLogger,
    private readonly clock: Clock,
  ) {
    this.banMs = settings.RATE_LIMIT_BAN_SECONDS * 1000;
    this.keyBan = { after: settings.RATE_LIMIT_BAN_AFTER, storeForMs: 0 };
    this.ipBan = { after: settings.RATE_LIMIT_BAN_AFTER, storeForMs: this.banMs };
  }

  /**
   * Counts the request against its key (or, without a valid key, its IP) and sets the headers.
   * Rejects with the 429 when a window is full or the client is banned. The request's key is
   * decided before (`KeyLookupBudget`).
   */
  async enforceLimits(
    req: Request,
    res: Response,
    windows: WindowSpec[] = windowsFor(req),
  ): Promise<void> {
    try {
      await this.count(req, res, windows);
    } catch (error) {
      if (error instanceof ApiException) {
        this.metrics.rateLimitRejected(req.auth?.plan ?? 'anonymous');
      }
      throw error;
    }
  }

  private async count(req: Request, res: Response, windows: WindowSpec[]): Promise<void> {
    req.rateLimited = true;
    const key = req.auth;
    const tracker = trackerOf(req);

    const keyBannedUntil = key?.bannedUntil?.getTime() ?? 0;
    if (keyBannedUntil > this.clock.now()) {
      setRateLimitHeaders(res, await this.storage.peek(tracker, windows));
      throw banned(keyBannedUntil - this.clock.now());
    }

    const result = await this.storage.hit(tracker, windows, key ? this.keyBan : this.ipBan);
    setRateLimitHeaders(res, result.windows);
    switch (result.outcome) {
      case 'admitted':
        return;
      case 'banned':
        throw banned((result.bannedUntilMs ?? this.clock.now()) - this.clock.now());
      case 'ban':
        return this.ban(req);
      case 'rejected':
        throw exceeded(result.windows, this.clock.now());
    }
  }

  private async ban(req: Request): Promise<never> {
    const key = req.auth;
    const banMs = this.banMs;
    const until = new Date(this.clock.now() + banMs);
    if (key) {
      await this.keys.ban(key.familyId, until);
      // The cached key is this object: this instance sees the ban at once, others (and the other
      // keys of a rotation family) when the key changes feed announces it (within 5 s without it).
      key.bannedUntil = until;
    }
    this.metrics.keyBanned(key?.plan ?? 'anonymous');
    this.logger.warn(
      {
        reqId: req.id,
        keyId: key?.keyId,
        ip: key ? undefined : clientAddressOf(req),
        plan: key?.plan,
        until,
      },
      'banned for sending after being rate limited',
    );
    throw banned(banMs);
  }

  /**
   * Whether the request has been counted already, or is served by a public route (health), never
   * counted: then its error response is not counted either.
   */
  isCounted(req: Request): boolean {
    return req.rateLimited === true;
  }

  /**
   * A request of a public route (health): never counted, and neither are its errors (a 503 of
   * readiness). The documents and Swagger UI are served before any guard and never get here.
   */
  exempt(req: Request): void {
    req.rateLimited = true;
  }

  /**
   * For error responses that never reached the guards (unknown path, 405, 413 …), under a version
   * or outside every one, once the request's key is decided: counts them too and gives them their
   * headers, so that no path is free to flood. Returns the 429 to answer instead, if the client
   * is over.
   */
  async countErrorResponse(
    req: Request,
    res: Response,
    status: number,
  ): Promise<ApiException | undefined> {
    if (
      req.authFailure === 'unavailable' ||
      status === (HttpStatus.SERVICE_UNAVAILABLE as number)
    ) {
      // The key could not be checked (the database is down; this error is the 503), or the
      // instance refused the request unserved (overloaded). Counting it, against the client's IP
      // at the free plan's numbers or against its key, would turn a client's 503s into 429s and
      // then a ban, and take from its limits what it was never served: report the window
      // without counting.
      await this.reportUncounted(req, res);
      return undefined;
    }
    try {
      await this.enforceLimits(req, res);
      return undefined;
    } catch (error) {
      if (error instanceof ApiException) return error;
      this.logger.warn({ err: error, reqId: req.id }, 'could not count a request');
      return undefined;
    }
  }

  /**
   * Sets the headers of the request's binding window without counting the request: for a
   * request refused unserved (the database is down, the instance overloaded).
   */
  async reportUncounted(req: Request, res: Response): Promise<void> {
    req.rateLimited = true;
    try {
      setRateLimitHeaders(res, await this.storage.peek(trackerOf(req), windowsFor(req)));
    } catch (error) {
      this.logger.warn({ err: error, reqId: req.id }, 'could not read the rate-limit window');
    }
  }
}

/**
 * Whom a request counts against: its valid key's rotation family (a key and its replacement share
 * one budget during the grace period: a rotation never doubles a limit), or without a valid key,
 * its client IP (or /64). A key that was never rotated is its own family, with its own id.
 */
function trackerOf(req: Request): string {
  return req.auth ? keyTracker(req.auth.familyId) : `ip:${clientAddressOf(req)}`;
}

/** The window that binds most: fewest requests remaining; on a tie, the one that resets later. */
export function bindingWindow(windows: WindowState[]): WindowState {
  const remaining = (w: WindowState): number => Math.max(0, w.limit - w.count);
  return windows.reduce((a, b) =>
    remaining(b) < remaining(a) || (remaining(b) === remaining(a) && b.resetAtMs > a.resetAtMs)
      ? b
      : a,
  );
}

const setLimit = headerSetter('X-RateLimit-Limit');
const setRemaining = headerSetter('X-RateLimit-Remaining');
const setReset = headerSetter('X-RateLimit-Reset');

/** The X-RateLimit-* headers of the binding window. */
export function setRateLimitHeaders(res: Response, windows: WindowState[]): void {
  const w = bindingWindow(windows);
  setLimit(res, String(w.limit));
  setRemaining(res, String(Math.max(0, w.limit - w.count)));
  setReset(res, String(Math.ceil(w.resetAtMs / 1000)));
}

function retryAfter(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

function banned(ms: number): ApiException {
  return new ApiException(RateLimitErrors.API_KEY_BANNED, undefined, {
    'Retry-After': retryAfter(ms),
  });
}

/** Retry-After: until the blocking window (the full one that resets last) has room again. */
function exceeded(windows: WindowState[], now: number): ApiException {
  const full = windows.filter((w) => w.count >= w.limit);
  const resetAtMs = Math.max(...full.map((w) => w.resetAtMs));
  return new ApiException(RateLimitErrors.RATE_LIMIT_EXCEEDED, undefined, {
    'Retry-After': retryAfter(resetAtMs - now),
  });
}
