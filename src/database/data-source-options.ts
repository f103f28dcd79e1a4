import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { DatabaseSettings } from '../config/app-config';
import { entities } from './entities';
import { migrations } from './migrations';

export const APPLICATION_NAME = 'store-orders-service';

/**
 * The one DataSource definition, used by the application and by `ormconfig.ts` (TypeORM CLI).
 * `synchronize` is off: the schema changes only through migrations.
 */
export function dataSourceOptions(
  url: string,
  settings: DatabaseSettings,
): PostgresDataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities,
    migrations,
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
      lock_timeout: settings.statementTimeoutMs,
      idle_in_transaction_session_timeout: settings.statementTimeoutMs * 2,
      keepAlive: true,
    },
  };
}
