import { Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { PinoLogger } from 'nestjs-pino';
import { ConfigModule } from '@nestjs/config';
import { REDIS_COMMAND_TIMEOUT_MS } from './redis-reply';
import { redisSettings, type RedisSettings } from './redis.settings';

/**
 * How long ioredis keeps a command without a reply before it drops it: a bound on what piles up
 * behind a connection that hangs. Callers stop waiting much sooner (`replyWithin`).
 */
const REDIS_ABANDON_AFTER_MS = 10 * REDIS_COMMAND_TIMEOUT_MS;

export const REDIS = Symbol('REDIS');
/** Inject the shared Redis client: `null` when REDIS_URL is not set. */
export const InjectRedis = (): ParameterDecorator => Inject(REDIS);

/**
 * One ioredis client per process when REDIS_URL is set. Commands fail fast while Redis is away
 * (no offline queue; callers wait at most {@link REDIS_COMMAND_TIMEOUT_MS} for a reply, through
 * `replyWithin`) instead of piling up behind a dead connection; the client reconnects by
 * itself.
 */
@Injectable()
class RedisLifecycle implements OnApplicationShutdown {
  constructor(@InjectRedis() private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.quit().catch(() => this.redis?.disconnect());
  }
}

@Global()
@Module({
  imports: [ConfigModule.forFeature(redisSettings)],
  providers: [
    {
      provide: REDIS,
      inject: [redisSettings.KEY, PinoLogger],
      useFactory: (settings: RedisSettings, logger: PinoLogger): Redis | null => {
        if (!settings.REDIS_URL) return null;
        logger.setContext('Redis');
        const redis = new Redis(settings.REDIS_URL, {
          enableOfflineQueue: false,
          commandTimeout: REDIS_ABANDON_AFTER_MS,
          connectTimeout: 2000,
          maxRetriesPerRequest: 0,
          retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
          // The commands of every request issued in one event-loop turn leave in one write (and
          // their replies come back in one read): the rate limiter's round trip per request
          // becomes one per turn.
          enableAutoPipelining: true,
        });
        let down = false;
        redis.on('error', (err: Error) => {
          if (!down) logger.warn({ err: err.message }, 'Redis unavailable');
          down = true;
        });
        redis.on('ready', () => {
          if (down) logger.info('Redis available again');
          down = false;
        });
        return redis;
      },
    },
    RedisLifecycle,
  ],
  exports: [REDIS],
})
export class RedisModule {}
