import type { Plan } from '../auth/plan';

export interface RateLimits {
  perMinute: number;
  perDay: number;
}

/** Limits of every plan but enterprise, whose limits are set per key when it is issued. */
export const PLAN_LIMITS: Readonly<Record<Exclude<Plan, 'enterprise'>, RateLimits>> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};

/** Requests without a valid key are limited per client IP with the free plan's numbers. */
export const ANONYMOUS_LIMITS: RateLimits = PLAN_LIMITS.free;
