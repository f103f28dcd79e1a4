import type { Logger as PinoLogger } from 'pino';
import { type HttpSettings, httpSettings } from './common/http/http.settings';
import { InvalidEnvironmentError, validateEnvironment } from './config/environment';
import { applyMigrations, migrationRunOf } from './database/apply-migrations';
import { databaseSettingsOf } from './database/data-source-options';
import { type DatabaseEnvironment, databaseSettings } from './database/database.settings';
import { EmbeddedDatabase, embeddedDatabaseInstalled } from './database/embedded/embedded-database';
import { createRootLogger } from './logging/logging.module';
import { loggingSettings } from './logging/logging.settings';

/** What the process starts with: its HTTP settings and the database it connects to. */
export interface Environment {
  http: HttpSettings;
  databaseUrl: string;
  /** Started for want of DATABASE_URL (development): stopped after the application closes. */
  embedded?: EmbeddedDatabase;
}

/**
 * Every module's settings validated at once, before anything starts (a bad one stops the
 * process here), then the database: DATABASE_URL, or else the embedded PostgreSQL, started and
 * migrated. Every module's settings are declared by then: `main.ts` imports the application
 * module first.
 */
export async function loadEnvironment(): Promise<Environment> {
  validateOrExit();
  // Read before Nest starts, as the modules read them (the same typed values).
  const database = databaseSettings.read(process.env);
  const http = httpSettings.read(process.env);
  // What is said before the application and its logger exist, in the same JSON format.
  const startupLog = createRootLogger(loggingSettings.read(process.env).LOG_LEVEL).child({
    context: 'Bootstrap',
  });
  if (database.DATABASE_URL !== undefined) return { http, databaseUrl: database.DATABASE_URL };
  const embedded = await startEmbeddedDatabase(database, startupLog);
  return { http, databaseUrl: embedded.url, embedded };
}

function validateOrExit(): void {
  try {
    validateEnvironment(process.env);
  } catch (error) {
    if (error instanceof InvalidEnvironmentError) {
      createRootLogger('info').fatal(
        { context: 'Bootstrap', problems: error.problems },
        `Invalid configuration: ${error.problems.join('; ')}`,
      );
      process.exit(1);
    }
    throw error;
  }
}

async function startEmbeddedDatabase(
  env: DatabaseEnvironment,
  startupLog: PinoLogger,
): Promise<EmbeddedDatabase> {
  if (!embeddedDatabaseInstalled()) {
    startupLog.fatal(
      'DATABASE_URL is not set, and this production install has no embedded PostgreSQL (a development dependency): set DATABASE_URL to the URL of a PostgreSQL database',
    );
    process.exit(1);
  }
  startupLog.info(
    { dir: env.EMBEDDED_DATABASE_DIR },
    `DATABASE_URL is not set: starting the embedded PostgreSQL in ${env.EMBEDDED_DATABASE_DIR}`,
  );
  const embedded = await EmbeddedDatabase.start({
    dir: env.EMBEDDED_DATABASE_DIR,
    port: env.EMBEDDED_DATABASE_PORT,
  });
  // As production does it: the schema's owner migrates, the service connects as the runtime
  // role, which can neither change the schema nor alter the audit trail.
  await applyMigrations(
    embedded.migrateUrl,
    databaseSettingsOf(env, { statementTimeoutMs: 0 }),
    migrationRunOf(env, {
      onRetry: ({ attempt, pauseMs, error }) =>
        startupLog.warn(
          { attempt, pauseMs, err: error },
          `A migration waited too long for a lock: trying again in ${pauseMs} ms`,
        ),
    }),
  );
  return embedded;
}
