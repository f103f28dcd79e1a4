/**
 * DataSource for the TypeORM CLI (`npm run migration:generate`, `migration:revert`; `migration:run`
 * is `src/database/migrate.ts`, which retries a migration that waited too long for a lock).
 * It targets DATABASE_URL, validated like the server's configuration.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { databaseSettingsOf, dataSourceOptions } from './src/database/data-source-options';
import { databaseSettings } from './src/database/database.settings';

const env = databaseSettings.read(process.env);
if (!env.DATABASE_URL) {
  throw new Error(
    'DATABASE_URL is not set. The TypeORM CLI works on an explicit database; for the embedded one ' +
      'started by `npm start`, use DATABASE_URL=postgres://postgres:postgres@localhost:54329/store_orders',
  );
}

export default new DataSource(
  dataSourceOptions(
    env.DATABASE_URL,
    // As `npm run migration:run` waits for locks (without its retries: run a revert again).
    databaseSettingsOf(env, { poolSize: 2, lockTimeoutMs: env.MIGRATION_LOCK_TIMEOUT_MS }),
  ),
);
