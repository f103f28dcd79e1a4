import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { join } from 'node:path';
import type { DatabaseEnvironment } from './database.settings';

/** A pool's limits: the application's, a tool's one connection, a migration's. */
export interface DatabaseSettings {
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  poolSize: number;
  /** How long a statement waits for a lock; the statement timeout unless told (migrations). */
  lockTimeoutMs?: number;
}

export const APPLICATION_NAME = 'store-orders-service';

/** The source tree (`src/` run from TypeScript, `dist/` once built): where features live. */
const FEATURES_ROOT = join(__dirname, '..');

/**
 * Every feature's entities and migrations, found by their place in its folder
 * (`src/<feature>/*.entity.ts`, `src/<feature>/migrations/*.ts`): a new module adds files, never
 * a line to a shared list. TypeORM runs migrations in the order of their timestamps.
 */
export const ENTITY_FILES = join(FEATURES_ROOT, '**', '*.entity.{ts,js}');
export const MIGRATION_FILES = join(FEATURES_ROOT, '**', 'migrations', '*.{ts,js}');

/**
 * A pool's limits from the database settings: one connection unless told otherwise (the `keys`
 * tool, the TypeORM CLI, `migrate.ts`; the application gives DATABASE_POOL_SIZE).
 */
export function databaseSettingsOf(
  env: DatabaseEnvironment,
  overrides: Partial<DatabaseSettings> = {},
): DatabaseSettings {
  return {
    connectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
    poolSize: 1,
    ...overrides,
  };
}

/**
 * The one DataSource definition, used by the application, `ormconfig.ts` (TypeORM CLI), the
 * `keys` tool, `migrate.ts` and the tests' setup. `synchronize` is off: the schema changes only
 * through migrations. (The application registers its entities per module instead of by file:
 * `TypeOrmModule.forFeature` with `autoLoadEntities`, see DatabaseModule.)
 */
export function dataSourceOptions(
  url: string,
  settings: DatabaseSettings,
): PostgresDataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: [ENTITY_FILES],
    migrations: [MIGRATION_FILES],
    migrationsTableName: 'typeorm_migrations',
    // Each migration in its own transaction, unless it opts out (an index built CONCURRENTLY).
    migrationsTransactionMode: 'each',
    synchronize: false,
    applicationName: APPLICATION_NAME,
    extra: {
      max: settings.poolSize,
      // pg's pool waits forever for a connection by default; a dead database must give a
      // prompt 503 instead of a hung request.
      connectionTimeoutMillis: settings.connectTimeoutMs,
      statement_timeout: settings.statementTimeoutMs,
      lock_timeout: settings.lockTimeoutMs ?? settings.statementTimeoutMs,
      idle_in_transaction_session_timeout: settings.statementTimeoutMs * 2,
      keepAlive: true,
    },
  };
}
