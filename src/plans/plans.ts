/**
 * The plans an API key can have and the rate limits each sets: read by auth (a key's limits),
 * rate limiting (the windows), the `keys` tool and the OpenAPI description alike.
 */
export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

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

/** Largest limit a key can carry (the database column is a 32-bit integer). */
const MAX_LIMIT = 2_147_483_647;

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

/** Limits in force for a key: its plan's, or its own for enterprise. */
export function limitsOf(key: {
  plan: Plan;
  perMinute: number | null;
  perDay: number | null;
}): RateLimits {
  if (key.plan !== 'enterprise') return PLAN_LIMITS[key.plan];
  return { perMinute: key.perMinute ?? 0, perDay: key.perDay ?? 0 };
}

export function isValidLimit(value: number): boolean {
  return Number.isSafeInteger(value) && value > 0 && value <= MAX_LIMIT;
}

/** How the limits are named where they are given: the keys tool's options, or a body's fields. */
export interface LimitNames {
  perMinute: string;
  perDay: string;
}

const OPTION_NAMES: LimitNames = { perMinute: '--per-minute', perDay: '--per-day' };

/**
 * What is wrong with these limits for this plan, or `undefined`: enterprise keys need both
 * limits, every other plan sets its own. The one rule behind the `keys` tool's usage errors, the
 * admin API's 400s and the keys' repository's refusals; `names` says the limits as the caller
 * takes them.
 */
export function planLimitsProblem(
  plan: Plan,
  limits: Partial<RateLimits> | undefined,
  names: LimitNames = OPTION_NAMES,
): string | undefined {
  const given = limits?.perMinute !== undefined || limits?.perDay !== undefined;
  const both =
    names === OPTION_NAMES
      ? '--per-minute N and --per-day N'
      : `${names.perMinute} and ${names.perDay}`;
  if (plan === 'enterprise') {
    if (limits?.perMinute === undefined || limits.perDay === undefined) {
      return `an enterprise key needs both ${both}`;
    }
    if (!isValidLimit(limits.perMinute) || !isValidLimit(limits.perDay)) {
      return `${names.perMinute} and ${names.perDay} must be positive integers`;
    }
    return undefined;
  }
  return given
    ? `${names.perMinute} and ${names.perDay} are for enterprise keys; the ${plan} plan sets its own limits`
    : undefined;
}
