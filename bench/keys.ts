import { displayPrefix, generateApiKey, hashApiKey } from '../src/auth/api-key';
import { withClient } from '../test/setup/clusters';

/**
 * `count` enterprise keys with limits far above any load here, stored as the service stores them
 * (the hash); returns their Authorization header values.
 */
export async function issueKeys(databaseUrl: string, count: number): Promise<string[]> {
  const keys = Array.from({ length: count }, () => generateApiKey());
  await withClient(databaseUrl, async (c) => {
    for (let i = 0; i < keys.length; i += 10_000) {
      const batch = keys.slice(i, i + 10_000);
      await c.query(
        `INSERT INTO api_keys (name, prefix, key_hash, plan, per_minute, per_day)
         SELECT 'bench', p, h, 'enterprise', 1000000000, 2000000000
           FROM unnest($1::text[], $2::text[]) AS k(p, h)`,
        [batch.map(displayPrefix), batch.map(hashApiKey)],
      );
    }
  });
  return keys.map((key) => `Bearer ${key}`);
}
