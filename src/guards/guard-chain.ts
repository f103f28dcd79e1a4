import type { Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { RequireApiKeyGuard } from '../auth/api-key.guard';
import { ScopeDeclarationsCheck } from '../auth/scope-declarations.check';
import { PlanThrottlerGuard } from '../rate-limit/plan-throttler.guard';

/**
 * The global guard chain, in this order: decide the request's key and count the request against
 * its plan (or, without a valid key, its IP), then require a valid key (and the route's scope). So
 * a request with a bad key is rate limited too and its 401 carries the headers. Routes opt out
 * with @Public(). The admin application has the same chain, and the same check of the scopes
 * its routes require.
 */
export const GUARD_CHAIN: Provider[] = [
  { provide: APP_GUARD, useExisting: PlanThrottlerGuard },
  { provide: APP_GUARD, useClass: RequireApiKeyGuard },
  ScopeDeclarationsCheck,
];
