import type { Request } from 'express';
import '../auth/request-auth';
import { ANONYMOUS_LIMITS, RateLimits } from '../plans/plans';
import type { WindowSpec } from './rate-limit.storage';

/** The two windows every key (or anonymous IP) has: a minute and a day. */
export const RATE_LIMIT_WINDOWS = [
  { name: 'minute', ttlMs: 60_000, limitOf: (limits: RateLimits) => limits.perMinute },
  { name: 'day', ttlMs: 86_400_000, limitOf: (limits: RateLimits) => limits.perDay },
] as const;

/** The limits in force for a request: its key's plan, or the free plan's per IP without a key. */
export function limitsFor(req: Request): RateLimits {
  return req.auth?.limits ?? ANONYMOUS_LIMITS;
}

export function windowsFor(req: Request): WindowSpec[] {
  const limits = limitsFor(req);
  return RATE_LIMIT_WINDOWS.map((w) => ({
    name: w.name,
    ttlMs: w.ttlMs,
    limit: w.limitOf(limits),
  }));
}
