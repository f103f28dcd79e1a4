import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ENV } from '../setup/clusters';

const ROOT = join(__dirname, '..', '..');

/**
 * `npm run build` once per test run, however many suites run the built server (`dist/`) in
 * parallel workers: `nest build` empties dist/ first, so two builds at once would pull it from
 * under a server another suite has just started. The first caller builds; the others wait for it.
 * `npm test` builds beside the lint, before Jest starts, and says so with TEST_DIST_BUILT=1.
 */
export async function buildOnce(): Promise<void> {
  if (process.env.TEST_DIST_BUILT === '1') return;
  const runDir = process.env[ENV.runDir];
  if (!runDir) throw new Error('The e2e global setup did not run (no run directory)');
  const lock = join(runDir, 'build');
  const done = join(lock, 'done');
  const failed = join(lock, 'failed');
  try {
    mkdirSync(lock);
  } catch {
    for (const deadline = Date.now() + 240_000; !existsSync(done);) {
      if (existsSync(failed)) throw new Error('npm run build failed (in another suite)');
      if (Date.now() > deadline) throw new Error('waited 240 s for another suite to build');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return;
  }
  try {
    await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT, timeout: 180_000 });
    writeFileSync(done, '');
  } catch (error) {
    writeFileSync(failed, String(error));
    throw error;
  }
}
