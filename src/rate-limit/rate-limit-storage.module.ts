import { Global, Module } from '@nestjs/common';
import type Redis from 'ioredis';
import { PinoLogger } from 'nestjs-pino';
import { ConfigModule } from '@nestjs/config';
import { Clock } from '../common/clock';
import { rateLimitSettings, type RateLimitSettings } from './rate-limit.settings';
import { MetricsService } from '../metrics/metrics.service';
import { REDIS } from '../redis/redis.module';
import { KeyLookupBudget } from './key-lookup-budget';
import { MemoryRateLimitStorage } from './memory-rate-limit.storage';
import { RATE_LIMIT_STORAGE, RateLimitStorage } from './rate-limit.storage';
import { RedisRateLimitStorage } from './redis-rate-limit.storage';

/**
 * Counters in process by default; in Redis, shared by every instance, when REDIS_URL is set; and
 * the budget of key lookups counted in them. Global, and imported by AppModule alone: the admin
 * application takes these very instances (and builds none), so that a key's requests count in the
 * same windows on both listeners, and the instance's lookups in one budget.
 */
@Global()
@Module({
  imports: [ConfigModule.forFeature(rateLimitSettings)],
  providers: [
    {
      provide: RATE_LIMIT_STORAGE,
      inject: [REDIS, PinoLogger, MetricsService, rateLimitSettings.KEY, Clock],
      useFactory: (
        redis: Redis | null,
        logger: PinoLogger,
        metrics: MetricsService,
        settings: RateLimitSettings,
        clock: Clock,
      ) => {
        logger.setContext('RateLimitStorage');
        const memory = new MemoryRateLimitStorage({
          maxAnonymousTrackers: settings.RATE_LIMIT_ANONYMOUS_TRACKERS,
          now: () => clock.now(),
        });
        const storage: RateLimitStorage = redis
          ? new RedisRateLimitStorage(redis, logger, () => metrics.rateLimitRedisFallback(), memory)
          : memory;
        return storage;
      },
    },
    KeyLookupBudget,
  ],
  exports: [RATE_LIMIT_STORAGE, KeyLookupBudget],
})
export class RateLimitStorageModule {}
