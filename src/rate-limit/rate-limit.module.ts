import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ThrottlerModule } from '@nestjs/throttler';
import { CommonModule } from '../common/common.module';
import { httpRequestOf } from '../common/http/http-context';
import { PlanThrottlerGuard } from './plan-throttler.guard';
import { RateLimitErrorsHook } from './rate-limit-errors.hook';
import { RateLimitService } from './rate-limit.service';
import { rateLimitSettings } from './rate-limit.settings';
import { limitsFor, RATE_LIMIT_WINDOWS } from './rate-limit.windows';

@Module({
  // The keys' store comes from AuthModule and the lookup budget from RateLimitStorageModule, both
  // global (in the admin application, the API's own instances: AdminAppModule).
  imports: [
    CommonModule,
    ConfigModule.forFeature(rateLimitSettings),
    // The throttlers' names, lengths and limits; PlanThrottlerGuard applies them together, on
    // RateLimitService's storage (RATE_LIMIT_STORAGE, of the global
    // RateLimitStorageModule), not the throttler's own.
    ThrottlerModule.forRoot({
      // The X-RateLimit-* headers are written by RateLimitService, not the throttler's own.
      setHeaders: false,
      throttlers: RATE_LIMIT_WINDOWS.map((window) => ({
        name: window.name,
        ttl: window.ttlMs,
        // Resolved from the plan already on the request (the key was resolved once, before).
        limit: (context) => window.limitOf(limitsFor(httpRequestOf(context))),
      })),
    }),
  ],
  providers: [RateLimitService, PlanThrottlerGuard, RateLimitErrorsHook],
  exports: [RateLimitService, PlanThrottlerGuard],
})
export class RateLimitModule {}
