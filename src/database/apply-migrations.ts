import { DataSource, type Migration } from 'typeorm';
import type { DatabaseSettings } from './data-source-options';
import { dataSourceOptions } from './data-source-options';

/**
 * Applies the pending migrations to `url`, on a connection of its own that is closed after: the
 * role that owns the schema runs them (`migrate.ts` for DATABASE_URL, `main.ts` and the keys tool
 * for the embedded database), never the role the service then connects as.
 */
export async function applyMigrations(
  url: string,
  settings: DatabaseSettings,
): Promise<Migration[]> {
  const dataSource = new DataSource(dataSourceOptions(url, settings));
  await dataSource.initialize();
  try {
    return await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}
