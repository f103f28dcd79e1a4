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
