import { DynamicModule, Module, type INestApplicationContext } from '@nestjs/common';
import { APP_OPTIONS, type AppOptions } from '../app-options';
import { GUARD_CHAIN } from '../app.module';
import { AuthModule } from '../auth/auth.module';
import { CommonModule } from '../common/common.module';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { LoggingModule } from '../logging/logging.module';
import { MetricsService } from '../metrics/metrics.service';
import { RATE_LIMIT_STORAGE } from '../rate-limit/rate-limit.storage';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { AdminKeysController } from './admin-keys.controller';

/** The admin API's routes, over the keys service of AuthModule. */
@Module({
  imports: [AuthModule],
  controllers: [AdminKeysController],
})
export class AdminModule {}

/** What the admin application takes from the API's rather than building its own. */
const SHARED_WITH_API = [RATE_LIMIT_STORAGE, MetricsService] as const;

@Module({})
class SharedWithApiModule {
  /**
   * The API application's rate-limit storage and metrics, as global providers of the admin one:
   * a key's requests count in the same windows on both listeners (in process or in Redis), and
   * admin requests are in the service's /metrics. Nest runs their shutdown hooks when either
   * application closes: the Redis storage's (its unused leases handed back) can run twice, and
   * `main.ts` closes the admin application first, while the API's Redis client is still open.
   */
  static of(api: INestApplicationContext): DynamicModule {
    return {
      module: SharedWithApiModule,
      global: true,
      providers: SHARED_WITH_API.map((token) => ({
        provide: token,
        useValue: api.get<unknown>(token),
      })),
      exports: [...SHARED_WITH_API],
    };
  }
}

/**
 * The admin application: a Nest application of its own on the admin listener (`ADMIN_PORT`),
 * beside the API's in the same process, on the same database, with the same error filter,
 * request observer, logging and guard chain (key, plan limits, scope), and the API's rate-limit
 * storage and metrics ({@link SharedWithApiModule}). Only what the admin API needs: no orders,
 * health or metrics listener. The main application has none of its routes, so its port answers
 * `/admin` 404 like any unknown path.
 */
@Module({})
export class AdminAppModule {
  static forRoot(api: INestApplicationContext): DynamicModule {
    const own: AppOptions = { databaseUrl: api.get<AppOptions>(APP_OPTIONS).databaseUrl };
    return {
      module: AdminAppModule,
      imports: [
        ConfigModule.forRoot(),
        CommonModule,
        LoggingModule.forRoot(),
        DatabaseModule.forRoot(own),
        SharedWithApiModule.of(api),
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
