import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { runKeysTool as runInProcess } from '../../src/cli/keys-tool';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the `keys` tool's command line against the database at `databaseUrl`, in this process:
 * what `npm run keys -- ...` runs, with its output and exit code, without a new Node process
 * (npm, then TypeScript compiled on the fly and every module loaded again: seconds apiece on a
 * loaded machine). {@link runKeysScript} runs it as an operator would.
 */
export async function runKeysTool(databaseUrl: string, args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runInProcess(
    args,
    { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    {
      out: (text) => {
        stdout += text;
      },
      err: (text) => {
        stderr += text;
      },
    },
  );
  return { code, stdout, stderr };
}

/**
 * Runs the real `keys` tool as an operator would (`npm run keys -- ...`: npm, then TypeScript
 * compiled on the fly; seconds apiece on a loaded machine) against the database at `databaseUrl`.
 */
export async function runKeysScript(databaseUrl: string, args: string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      'npm',
      ['run', '-s', 'keys', '--', ...args],
      {
        env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
