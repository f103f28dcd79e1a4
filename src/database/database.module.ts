import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppOptions } from './app-options';
import { ConfigModule } from '@nestjs/config';
import { dataSourceOptions, databaseSettingsOf } from './data-source-options';
import { databaseSettings, type DatabaseEnvironment } from './database.settings';
import { DatabaseErrorsHook } from './database-errors.hook';
import { DatabasePools } from './database-pools';
import { PoolClientErrorListener } from './pool-client-errors.listener';
import { SchemaVersion } from './schema-version';

@Module({})
export class DatabaseModule {
  static forRoot(options: AppOptions): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        ConfigModule.forFeature(databaseSettings),
        TypeOrmModule.forRootAsync({
          imports: [ConfigModule.forFeature(databaseSettings)],
          inject: [databaseSettings.KEY],
          useFactory: (env: DatabaseEnvironment) => ({
            ...dataSourceOptions(
              options.databaseUrl,
              databaseSettingsOf(env, { poolSize: env.DATABASE_POOL_SIZE }),
            ),
            // Each feature module registers its own (`TypeOrmModule.forFeature([Order])`).
            entities: [],
            autoLoadEntities: true,
            // Fail fast at start instead of TypeORM's default of retrying for half a minute.
            retryAttempts: 0,
          }),
        }),
      ],
      providers: [PoolClientErrorListener, DatabaseErrorsHook, DatabasePools, SchemaVersion],
      // Pools of their own for the features that need one (`DatabasePools.createPool`); the
      // schema's latest migration, checked at start.
      exports: [DatabasePools, SchemaVersion],
      global: true,
    };
  }
}
