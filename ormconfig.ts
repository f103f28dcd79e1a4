/**
 * DataSource for the TypeORM CLI (`npm run migration:run`, `migration:generate`, `migration:revert`).
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
  dataSourceOptions(env.DATABASE_URL, databaseSettingsOf(env, { poolSize: 2 })),
);
