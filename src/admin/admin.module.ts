import {
  DynamicModule,
  type InjectionToken,
  Module,
  type INestApplicationContext,
} from '@nestjs/common';
import { ConfigModule as NestConfigModule } from '@nestjs/config';
import { DataSource } from 'typeorm';
import { ApiKeyAuthenticator } from '../auth/api-key.authenticator';
import { ApiKeysRepository } from '../auth/api-keys.repository';
import { KeysService } from '../auth/keys.service';
import { Clock } from '../common/clock';
import { CommonModule } from '../common/common.module';
import { httpSettings } from '../common/http/http.settings';
import { ConfigModule } from '../config/config.module';
import { DatabaseErrorsHook } from '../database/database-errors.hook';
import { GUARD_CHAIN } from '../guards/guard-chain';
import { LoggingModule } from '../logging/logging.module';
import { MetricsService } from '../metrics/metrics.service';
import { KeyLookupBudget } from '../rate-limit/key-lookup-budget';
import { RATE_LIMIT_STORAGE } from '../rate-limit/rate-limit.storage';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { type AdminRoutes, declaredAdminRoutes } from '../admin-routes/admin-routes';
import { AdminKeysController } from './admin-keys.controller';

/**
 * The admin API's routes: the keys' (over AuthModule's keys service), then those each loaded
 * module declares in its `<module>.admin.ts` (the webhooks').
 */
@Module({})
export class AdminModule {
  static of(routes: readonly AdminRoutes[]): DynamicModule {
    return {
      module: AdminModule,
      controllers: [AdminKeysController, ...routes.flatMap((r) => r.controllers)],
    };
  }
}

/** Whether the API application has a provider (the module that declares it is loaded). */
function hasProvider(api: INestApplicationContext, token: InjectionToken): boolean {
  try {
    api.get<unknown>(token, { strict: false });
    return true;
  } catch {
    return false;
  }
}

/** The declared admin routes whose module the API application loaded. */
function loadedAdminRoutes(api: INestApplicationContext): AdminRoutes[] {
  return declaredAdminRoutes().filter((routes) =>
    routes.fromApi.every((token) => hasProvider(api, token)),
  );
}

/**
 * What the admin application takes from the API's rather than building its own: the database
 * (TypeORM's DataSource and its pool), what the modules' admin routes call, AuthModule's exports (and so its one key cache, kept
 * current by its one feed of key changes), the rate-limit storage, the metrics and the clock. None of the
 * keys' classes has a lifecycle hook; the DataSource is closed by the API's TypeORM module.
 */
const SHARED_WITH_API = [
  DataSource,
  Clock,
  ApiKeysRepository,
  ApiKeyAuthenticator,
  KeyLookupBudget,
  KeysService,
  RATE_LIMIT_STORAGE,
  MetricsService,
] as const;

@Module({})
class SharedWithApiModule {
  /**
   * The API application's instances as global providers of the admin one: one database pool,
   * one key cache (a key created, rotated or revoked over the admin API is seen by both listeners
   * at once), a key's requests counted in the same windows on both listeners (in process or in
   * Redis), and admin requests in the service's /metrics. Nest runs their shutdown hooks when either
   * application closes: the Redis storage's (its unused leases handed back) can run twice, and
   * the shutdown (`main.shutdown.ts`) closes the admin application first, while the API's Redis client is still open.
   */
  static of(api: INestApplicationContext, routes: readonly AdminRoutes[]): DynamicModule {
    const shared = [...SHARED_WITH_API, ...routes.flatMap((r) => r.fromApi)];
    return {
      module: SharedWithApiModule,
      global: true,
      providers: shared.map((token) => ({
        provide: token,
        useValue: api.get<unknown>(token, { strict: false }),
      })),
      exports: shared,
    };
  }
}

/**
 * The admin application: a Nest application of its own on the admin listener (`ADMIN_PORT`),
 * beside the API's in the same process, with the same error filter, request observer, logging
 * and guard chain (key, plan limits, scope), over the API's database pool, keys and rate-limit
 * storage and metrics ({@link SharedWithApiModule}): no second pool, key cache or feed. Only what
 * the admin API needs: no orders, health or metrics listener. The main application has none of
 * its routes, so its port answers `/admin` 404 like any unknown path.
 */
@Module({})
export class AdminAppModule {
  static forRoot(api: INestApplicationContext): DynamicModule {
    const routes = loadedAdminRoutes(api);
    return {
      module: AdminAppModule,
      imports: [
        ConfigModule.forRoot(),
        // What the HTTP setup (configureApp) reads, as for the API's listener.
        NestConfigModule.forFeature(httpSettings),
        CommonModule,
        LoggingModule.forRoot(),
        SharedWithApiModule.of(api, routes),
        RateLimitModule,
        AdminModule.of(routes),
      ],
      providers: [DatabaseErrorsHook, ...GUARD_CHAIN],
    };
  }
}
