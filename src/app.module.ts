import { DynamicModule, Module, type Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { APP_OPTIONS, AppOptions } from './app-options';
import { RequireApiKeyGuard } from './auth/api-key.guard';
import { AuthModule } from './auth/auth.module';
import { CommonModule } from './common/common.module';
import { JsonStreamSender } from './common/http/send-json-stream';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { OrdersModule } from './orders/orders.module';
import { PlanThrottlerGuard } from './rate-limit/plan-throttler.guard';
import { RateLimitStorageModule } from './rate-limit/rate-limit-storage.module';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { RedisModule } from './redis/redis.module';

/**
 * The global guard chain, in this order: decide the request's key and count the request against
 * its plan (or, without a valid key, its IP), then require a valid key (and the route's scope). So
 * a request with a bad key is rate limited too and its 401 carries the headers. Routes opt out
 * with @Public(). The admin application has the same chain.
 */
export const GUARD_CHAIN: Provider[] = [
  { provide: APP_GUARD, useExisting: PlanThrottlerGuard },
  { provide: APP_GUARD, useClass: RequireApiKeyGuard },
];

@Module({})
export class AppModule {
  static forRoot(options: AppOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(),
        CommonModule,
        LoggingModule.forRoot(),
        DatabaseModule.forRoot(options),
        RedisModule,
        RateLimitStorageModule,
        AuthModule,
        RateLimitModule,
        MetricsModule,
        HealthModule,
        OrdersModule,
      ],
      providers: [
        { provide: APP_OPTIONS, useValue: options },
        // The sender of JSON lists, for every module's list routes: through it, a HEAD of a list
        // is answered without reading the list.
        {
          provide: JsonStreamSender,
          inject: [AppConfig],
          useFactory: (config: AppConfig) =>
            new JsonStreamSender({
              stallTimeoutMs: config.stallTimeoutMs,
              shutdown: config.shutdown,
            }),
        },
        ...GUARD_CHAIN,
      ],
      exports: [APP_OPTIONS, JsonStreamSender],
      global: true,
    };
  }
}
