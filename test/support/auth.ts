import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { displayPrefix, generateApiKey, hashApiKey } from '../../src/auth/api-key';

/**
 * Headers that authenticate a request to `/v1` against the database at `databaseUrl`: a new
 * enterprise key there, with limits no suite reaches, stored as the server stores keys.
 */
export async function bearerFor(databaseUrl: string): Promise<Record<string, string>> {
  const key = generateApiKey();
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO api_keys (name, prefix, key_hash, plan, per_minute, per_day)
       VALUES ('e2e', $1, $2, 'enterprise', 1000000000, 2000000000)`,
      [displayPrefix(key), hashApiKey(key)],
    );
  } finally {
    await client.end();
  }
  return { Authorization: `Bearer ${key}` };
}

/**
 * Headers with an enterprise key whose limits are far above any load run here, issued as an
 * operator would: with the built `keys` tool (`npm run build` first), on `databaseUrl`.
 */
export async function bearerFromKeysTool(
  databaseUrl: string,
  name: string,
): Promise<Record<string, string>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      'dist/cli/keys.js',
      'create',
      '--plan',
      'enterprise',
      '--per-minute',
      '100000000',
      '--per-day',
      '1000000000',
      '--name',
      name,
      '--json',
    ],
    {
      cwd: join(__dirname, '../..'),
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    },
  );
  const { key } = JSON.parse(stdout) as { key: string };
  return { Authorization: `Bearer ${key}` };
}
