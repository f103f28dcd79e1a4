import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import type { Request } from 'express';
import { AuthModule } from '../auth/auth.module';
import { PlanThrottlerGuard } from './plan-throttler.guard';
import { RateLimitStorageModule } from './rate-limit-storage.module';
import { RATE_LIMIT_STORAGE, RateLimitStorage } from './rate-limit.storage';
import { RateLimitService } from './rate-limit.service';
import { limitsFor, RATE_LIMIT_WINDOWS } from './rate-limit.windows';

@Module({
  imports: [
    AuthModule,
    RateLimitStorageModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStorageModule],
      inject: [RATE_LIMIT_STORAGE],
      useFactory: (storage: RateLimitStorage) => ({
        storage,
        // The contract's headers are written by RateLimitService, not the throttler's own.
        setHeaders: false,
        throttlers: RATE_LIMIT_WINDOWS.map((window) => ({
          name: window.name,
          ttl: window.ttlMs,
          // Resolved from the plan already on the request (the key was resolved once, before).
          limit: (context) =>
            window.limitOf(limitsFor(context.switchToHttp().getRequest<Request>())),
        })),
      }),
    }),
  ],
  providers: [RateLimitService, PlanThrottlerGuard],
  exports: [RateLimitService, PlanThrottlerGuard],
})
export class RateLimitModule {}
