import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_OPTIONS, type AppOptions } from '../app-options';
import { GUARD_CHAIN } from '../app.module';
import { AuthModule } from '../auth/auth.module';
import { CommonModule } from '../common/common.module';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { LoggingModule } from '../logging/logging.module';
import { MetricsService } from '../metrics/metrics.service';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { RedisModule } from '../redis/redis.module';
import { AdminKeysController } from './admin-keys.controller';

/** The admin API's routes, over the keys service of AuthModule. */
@Module({
  imports: [AuthModule],
  controllers: [AdminKeysController],
})
export class AdminModule {}

/**
 * The request observer counts into a MetricsService; the admin application's is its own and
 * served nowhere (the API's MetricsServer owns METRICS_PORT).
 */
@Global()
@Module({ providers: [MetricsService], exports: [MetricsService] })
class AdminMetricsModule {}

/**
 * The admin application: a Nest application of its own on the admin listener (`ADMIN_PORT`),
 * beside the API's, on the same database and Redis, with the same error filter, request
 * observer, logging and guard chain (key, plan limits, scope). Only what the admin API needs:
 * no orders, health or metrics listener. The main application has none of its routes, so its
 * port answers `/admin` 404 like any unknown path.
 */
@Module({})
export class AdminAppModule {
  static forRoot(options: AppOptions): DynamicModule {
    const own: AppOptions = { databaseUrl: options.databaseUrl };
    return {
      module: AdminAppModule,
      imports: [
        ConfigModule.forRoot(),
        CommonModule,
        LoggingModule.forRoot(),
        DatabaseModule.forRoot(own),
        RedisModule,
        AdminMetricsModule,
        AuthModule,
        RateLimitModule,
        AdminModule,
      ],
      providers: [{ provide: APP_OPTIONS, useValue: own }, ...GUARD_CHAIN],
      exports: [APP_OPTIONS],
      global: true,
    };
  }
}
