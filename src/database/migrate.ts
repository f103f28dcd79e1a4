/**
 * Applies pending migrations to DATABASE_URL and exits: `node dist/database/migrate.js` in images
 * that carry no devDependencies (the one-shot `migrate` service in docker/docker-compose.yml),
 * `npm run migration:run` from a checkout. Each statement waits for a lock at most
 * MIGRATION_LOCK_TIMEOUT_MS, and a migration that gave up is tried again (MIGRATION_RETRIES).
 */
import 'reflect-metadata';
import { InvalidEnvironmentError } from '../config/settings';
import { applyMigrations, migrationRunOf } from './apply-migrations';
import { databaseSettingsOf } from './data-source-options';
import { databaseSettings } from './database.settings';

async function migrate(): Promise<void> {
  const env = databaseSettings.read(process.env);
  if (!env.DATABASE_URL) throw new Error('DATABASE_URL is not set: nothing to migrate');
  const applied = await applyMigrations(
    env.DATABASE_URL,
    // Migrations may rewrite a large table: no per-statement limit, but a short wait for locks.
    databaseSettingsOf(env, { statementTimeoutMs: 0 }),
    migrationRunOf(env, {
      onRetry: ({ attempt, pauseMs, error }) =>
        process.stdout.write(
          `Gave up waiting for a lock (${error.message}): try ${attempt + 1} of ${env.MIGRATION_RETRIES + 1} in ${pauseMs} ms\n`,
        ),
    }),
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
