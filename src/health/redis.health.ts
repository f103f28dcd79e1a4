import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import type Redis from 'ioredis';
import { InjectRedis } from '../redis/redis.module';

/** Redis is up when it answers PING; the shared client fails fast while it is away. */
@Injectable()
export class RedisHealthIndicator {
  constructor(
    @InjectRedis() private readonly redis: Redis | null,
    private readonly indicator: HealthIndicatorService,
  ) {}

  /** Whether REDIS_URL is configured at all: without it, readiness does not depend on Redis. */
  get isConfigured(): boolean {
    return this.redis !== null;
  }

  pingCheck<Key extends string>(key: Key, timeoutMs: number) {
    return this.indicator
      .check(key)
      .attempt(async () => {
        if (this.redis === null) throw new Error('REDIS_URL is not configured');
        await this.redis.ping();
      })
      .withTimeout(timeoutMs);
  }
}
