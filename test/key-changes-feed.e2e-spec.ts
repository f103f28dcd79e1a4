import 'reflect-metadata';
import { Client, type Notification } from 'pg';
import { DataSource } from 'typeorm';
import { hashApiKey } from '../src/auth/api-key';
import { ApiKeyChangesNotify1764000000000 } from '../src/auth/migrations/1764000000000-api-key-changes-notify';
import { dataSourceOptions } from '../src/database/data-source-options';
import { bearerFor } from './support/auth';
import { createTestDatabase } from './support/test-app';

/** Where the api_keys trigger announces changed keys (migration ApiKeyChangesNotify). */
const KEY_CHANGES_CHANNEL = 'api_key_changes';

/** A new key in the database, as the `keys` tool stores one: its plaintext and its hash. */
async function newKey(databaseUrl: string): Promise<{ key: string; hash: string }> {
  const { Authorization } = await bearerFor(databaseUrl);
  const key = Authorization.slice('Bearer '.length);
  return { key, hash: hashApiKey(key) };
}

describe('the api_keys trigger', () => {
  let databaseUrl: string;
  let listener: Client;
  const heard: string[] = [];

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    listener = new Client({ connectionString: databaseUrl });
    await listener.connect();
    listener.on('notification', (n: Notification) => heard.push(n.payload ?? ''));
    await listener.query(`LISTEN ${KEY_CHANGES_CHANNEL}`);
  });
  afterAll(() => listener.end());

  /** What the channel says after `sql` (a round trip on the listener brings what was sent). */
  async function announced(sql: string, params: unknown[]): Promise<string[]> {
    heard.length = 0;
    await listener.query(sql, params);
    await listener.query('SELECT 1');
    return [...heard];
  }

  it('announces a change of anything but last_used_at, with the key hash', async () => {
    const { hash } = await newKey(databaseUrl);
    expect(
      await announced('UPDATE api_keys SET last_used_at = now() WHERE key_hash = $1', [hash]),
    ).toEqual([]);
    // Nothing changed (an unban of a key that is not banned): nothing to say.
    expect(
      await announced('UPDATE api_keys SET banned_until = NULL WHERE key_hash = $1', [hash]),
    ).toEqual([]);
    for (const change of [
      'revoked_at = now()',
      `banned_until = now() + interval '1 hour'`,
      `expires_at = now() + interval '1 day'`,
      'per_minute = 5',
    ]) {
      expect(await announced(`UPDATE api_keys SET ${change} WHERE key_hash = $1`, [hash])).toEqual([
        hash,
      ]);
    }
  });

  it('announces both hashes when a hash changes, and the hash of a deleted key', async () => {
    const { hash } = await newKey(databaseUrl);
    const replacement = hashApiKey('sk_replacement');
    expect(
      await announced('UPDATE api_keys SET key_hash = $2 WHERE key_hash = $1', [hash, replacement]),
    ).toEqual([hash, replacement]);
    expect(await announced('DELETE FROM api_keys WHERE key_hash = $1', [replacement])).toEqual([
      replacement,
    ]);
  });

  it('is removed by the migration’s down(), and put back by its up()', async () => {
    const { hash } = await newKey(databaseUrl);
    const change = `UPDATE api_keys SET revoked_at = now() - interval '1 second' WHERE key_hash = $1`;
    const ds = new DataSource(
      dataSourceOptions(databaseUrl, {
        connectTimeoutMs: 5000,
        statementTimeoutMs: 30000,
        poolSize: 1,
      }),
    );
    await ds.initialize();
    const runner = ds.createQueryRunner();
    try {
      const migration = new ApiKeyChangesNotify1764000000000();
      await migration.down(runner);
      expect(await announced(change, [hash])).toEqual([]);
      await migration.up(runner);
      expect(await announced(change.replace('1 second', '2 seconds'), [hash])).toEqual([hash]);
    } finally {
      await runner.release();
      await ds.destroy();
    }
  });
});
