/**
 * Applies pending migrations to DATABASE_URL and exits: `node dist/database/migrate.js`, the
 * compiled twin of `npm run migration:run` for images that carry no devDependencies (the
 * one-shot `migrate` service in docker/docker-compose.yml).
 */
import 'reflect-metadata';
import { InvalidEnvironmentError } from '../config/settings';
import { applyMigrations } from './apply-migrations';
import { databaseSettingsOf } from './data-source-options';
import { databaseSettings } from './database.settings';

async function migrate(): Promise<void> {
  const env = databaseSettings.read(process.env);
  if (!env.DATABASE_URL) throw new Error('DATABASE_URL is not set: nothing to migrate');
  const applied = await applyMigrations(
    env.DATABASE_URL,
    // Migrations may rewrite a large table: no per-statement limit.
    databaseSettingsOf(env, { statementTimeoutMs: 0 }),
  );
  const names = applied.map((m) => m.name).join(', ');
  process.stdout.write(
    applied.length > 0 ? `Applied ${applied.length} migration(s): ${names}\n` : 'Up to date\n',
  );
}

migrate().catch((error: unknown) => {
  const message =
    error instanceof InvalidEnvironmentError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`Migration failed: ${message}\n`);
  process.exit(1);
});
