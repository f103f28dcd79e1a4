import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `keys` tool as an operator would (`npm run keys -- ...`: npm, then TypeScript
 * compiled on the fly; seconds apiece on a loaded machine) against the database at `databaseUrl`.
 */
export async function runKeysTool(databaseUrl: string, args: string[]): Promise<CliResult> {
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
