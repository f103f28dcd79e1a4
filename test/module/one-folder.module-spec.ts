import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { addModuleLine, copyModuleFolder } from '../support/module-folder';

const ROOT = join(__dirname, '..', '..');
const FIXTURE = join(ROOT, 'test/fixtures/widgets');
const FOLDER = 'widgets';

/** A check may take minutes on a busy machine: the lint, a build, a jest run. */
const STEP_TIMEOUT_MS = 20 * 60_000;

/** What a check printed, enough of its end to see why it failed. */
const TAIL_LINES = 150;

/**
 * A copy of the repository's files as git knows them (tracked, and new ones not ignored, as they
 * are in the working tree), sharing its node_modules: cheap, and what a team's clone holds.
 */
async function scratchCopy(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'store-orders-module-'));
  const files = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: ROOT, encoding: 'utf8' },
  )
    .split('\0')
    .filter((file) => file !== '' && existsSync(join(ROOT, file)));
  for (const file of files) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await copyFile(join(ROOT, file), join(dir, file));
  }
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** Runs `npm <args>` in the copy; a failure carries the end of what it printed. */
function npm(dir: string, args: string[]): Promise<void> {
  // Jest's own variables are this run's, not the one the check may start.
  const env: NodeJS.ProcessEnv = { ...process.env, CI: 'true' };
  delete env.JEST_WORKER_ID;
  return new Promise((resolve, reject) => {
    const child = spawn('npm', args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) {
        resolve();
        return;
      }
      const tail = Buffer.concat(output).toString('utf8').split('\n').slice(-TAIL_LINES);
      reject(new Error(`npm ${args.join(' ')} exited ${code}:\n${tail.join('\n')}`));
    });
  });
}

/**
 * docs/extending.md, step by step, on the example module (test/fixtures/widgets): its folder
 * copied under `src/`, its line added to AppModule, `npm run generate`, then what CI runs on the
 * code. Nothing else in the copy is edited: a check that needs another edit is a gap in the
 * service's mechanisms, not in the module.
 */
describe('a module is one folder under src/ and one line in AppModule', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await scratchCopy();
    await copyModuleFolder(FIXTURE, join(dir, 'src', FOLDER));
    await addModuleLine(join(dir, 'src'), 'WidgetsModule', `${FOLDER}/widgets.module.ts`);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'regenerates the generated files with npm run generate',
    async () => {
      await npm(dir, ['run', 'generate']);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'passes npm run lint: tsc, eslint, the folders rules, the migrations',
    async () => {
      await npm(dir, ['run', 'lint']);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'builds the service and the client',
    async () => {
      await npm(dir, ['run', 'build']);
      await npm(dir, ['run', 'build:client']);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "passes the generated files' tests and the module's own suite",
    async () => {
      const report = join(dir, 'jest-report.json');
      await npm(dir, [
        'exec',
        '--',
        'jest',
        '--json',
        `--outputFile=${report}`,
        // The settings' and error codes' tables, the folders' drawing, the client's types.
        'src/config/settings-docs.spec.ts',
        'src/common/errors/error-code-docs.spec.ts',
        'test/docs.e2e-spec.ts',
        'clients/typescript/test/types.e2e-spec.ts',
        // The module's own suites, in its folder.
        `src/${FOLDER}/`,
      ]);
      // A suite of the folder that jest did not find would pass unseen: it must have run.
      const { testResults } = JSON.parse(await readFile(report, 'utf8')) as {
        testResults: { name: string; assertionResults: { status: string }[] }[];
      };
      const own = testResults.filter((suite) => suite.name.includes(`/src/${FOLDER}/`));
      expect(own.map((suite) => suite.name.slice(dir.length))).toEqual([
        `/src/${FOLDER}/widgets.e2e-spec.ts`,
      ]);
      expect(own[0].assertionResults.length).toBeGreaterThan(0);
    },
    STEP_TIMEOUT_MS,
  );
});
