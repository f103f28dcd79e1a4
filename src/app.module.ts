import { DynamicModule, Module } from '@nestjs/common';
import { APP_OPTIONS, AppOptions } from './database/app-options';
import { AuthModule } from './auth/auth.module';
import { ClockModule } from './common/clock';
import { CommonModule } from './common/common.module';
import { JsonStreamSender } from './common/http/send-json-stream';
import { ConfigModule as NestConfigModule } from '@nestjs/config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { GUARD_CHAIN } from './guards/guard-chain';
import { HealthModule } from './health/health.module';
import { shutdownSettings, type ShutdownSettings } from './health/shutdown.settings';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { OrdersModule } from './orders/orders.module';
import { OverloadModule } from './overload/overload.module';
import { RateLimitStorageModule } from './rate-limit/rate-limit-storage.module';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { openApiSettings } from './openapi/openapi.settings';
import { httpSettings, type HttpSettings } from './common/http/http.settings';
import { RedisModule } from './redis/redis.module';
import { WebhooksModule } from './webhooks/webhooks.module';

@Module({})
export class AppModule {
  static forRoot(options: AppOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(),
        // What the HTTP setup (configureApp), main.ts and the OpenAPI routes read.
        NestConfigModule.forFeature(httpSettings),
        NestConfigModule.forFeature(shutdownSettings),
        NestConfigModule.forFeature(openApiSettings),
        ClockModule,
        CommonModule,
        LoggingModule.forRoot(),
        DatabaseModule.forRoot(options),
        RedisModule,
        RateLimitStorageModule,
        AuthModule,
        RateLimitModule,
        MetricsModule,
        OverloadModule,
        HealthModule,
        OrdersModule,
        WebhooksModule,
      ],
      providers: [
        { provide: APP_OPTIONS, useValue: options },
        // The sender of JSON lists, for every module's list routes: through it, a HEAD of a list
        // is answered without reading the list.
        {
          provide: JsonStreamSender,
          inject: [httpSettings.KEY, shutdownSettings.KEY],
          useFactory: (http: HttpSettings, shutdown: ShutdownSettings) =>
            new JsonStreamSender({
              stallTimeoutMs: http.HTTP_STALL_TIMEOUT_MS,
              shutdown: {
                drainDelayMs: shutdown.SHUTDOWN_DRAIN_DELAY_MS,
                timeoutMs: shutdown.SHUTDOWN_TIMEOUT_MS,
              },
            }),
        },
        ...GUARD_CHAIN,
      ],
      exports: [APP_OPTIONS, JsonStreamSender],
      global: true,
    };
  }
}
