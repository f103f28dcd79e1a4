import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, MigrationExecutor, type Migration, type MixedList } from 'typeorm';
import type { DatabaseSettings } from './data-source-options';
import { dataSourceOptions } from './data-source-options';
import type { DatabaseEnvironment } from './database.settings';

/** PostgreSQL's `lock_not_available`: a statement gave up waiting for its lock (`lock_timeout`). */
const LOCK_NOT_AVAILABLE = '55P03';

/** How long a migration statement may wait for a lock, and how often a migration is tried. */
export interface MigrationRun {
  lockTimeoutMs: number;
  retries: number;
  /** Told of each lock timeout before the pause that precedes the next try. */
  onRetry?: (retry: { attempt: number; pauseMs: number; error: Error }) => void;
  /** Migrations besides the features' own (a test's fixture module). */
  migrations?: MixedList<string | (new () => unknown)>;
}

/** A run with MIGRATION_LOCK_TIMEOUT_MS and MIGRATION_RETRIES. */
export function migrationRunOf(
  env: DatabaseEnvironment,
  extra: Omit<MigrationRun, 'lockTimeoutMs' | 'retries'> = {},
): MigrationRun {
  return {
    lockTimeoutMs: env.MIGRATION_LOCK_TIMEOUT_MS,
    retries: env.MIGRATION_RETRIES,
    ...extra,
  };
}

/** The pause before try `attempt + 1`: doubling from a quarter second, at most ten seconds. */
export function retryPauseMs(attempt: number): number {
  return Math.min(250 * 2 ** (attempt - 1), 10_000);
}

/**
 * Applies the pending migrations to `url`, on a connection of its own that is closed after: the
 * role that owns the schema runs them (`migrate.ts` for DATABASE_URL, `main.ts` and the keys tool
 * for the embedded database), never the role the service then connects as.
 *
 * Every statement waits at most `lockTimeoutMs` for a lock. An `ALTER TABLE` queued behind a long
 * read would otherwise hold up every request behind it in the lock's queue for as long as the
 * read lasts; here it gives up, its migration's transaction rolls back, and the run tries again
 * after a pause (what was applied before stays applied), up to `retries` times.
 */
export async function applyMigrations(
  url: string,
  settings: DatabaseSettings,
  run: MigrationRun,
): Promise<Migration[]> {
  const options = dataSourceOptions(url, { ...settings, lockTimeoutMs: run.lockTimeoutMs });
  const dataSource = new DataSource({
    ...options,
    migrations: [...(options.migrations as string[]), ...listOf(run.migrations)],
  });
  await dataSource.initialize();
  try {
    const pending = await new MigrationExecutor(dataSource).getPendingMigrations();
    for (let attempt = 1; ; attempt++) {
      try {
        await dataSource.runMigrations({ transaction: 'each' });
        return pending;
      } catch (error) {
        if (!isLockTimeout(error) || attempt > run.retries) throw error;
        const pauseMs = retryPauseMs(attempt);
        run.onRetry?.({ attempt, pauseMs, error });
        await sleep(pauseMs);
      }
    }
  } finally {
    await dataSource.destroy();
  }
}

function listOf<T>(list: MixedList<T> | undefined): T[] {
  if (list === undefined) return [];
  return Array.isArray(list) ? list : Object.values(list);
}

function isLockTimeout(error: unknown): error is Error {
  return (
    error instanceof Error &&
    'driverError' in error &&
    (error.driverError as { code?: string } | undefined)?.code === LOCK_NOT_AVAILABLE
  );
}
