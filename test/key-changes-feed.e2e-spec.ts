import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Pool, type Notification } from 'pg';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { generateApiKey, hashApiKey } from '../src/auth/api-key';
import { KeyCache } from '../src/auth/key-cache';
import { KEY_CHANGES_APPLICATION_NAME, KEY_CHANGES_CHANNEL } from '../src/auth/key-changes.feed';
import { ApiKeyChangesNotify1764000000000 } from '../src/auth/migrations/1764000000000-api-key-changes-notify';
import { Clock } from '../src/common/clock';
import { dataSourceOptions } from '../src/database/data-source-options';
import { AppProcess } from './support/app-process';
import { bearerFor } from './support/auth';
import { api } from './support/client';
import { driveClock, type DrivenClock } from './support/clock';
import { buildOnce } from './support/build';
import { eventually } from './support/eventually';
import { httpRequest } from './support/http';
import { said } from './support/said';
import { testAppPerSuite } from './support/suite-app';
import { createTestApp, createTestDatabase, listen, type TestApp } from './support/test-app';

const ROOT = join(__dirname, '..');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Well within the 5 s a change takes to reach an instance without the feed. */
const AT_ONCE_MS = 2_000;

interface Instance {
  app: AppProcess;
  url: string;
}

/** The built service (`node dist/main.js`) on `databaseUrl`, once its key changes feed listens. */
async function startInstance(databaseUrl: string, env: Record<string, string> = {}) {
  const { app, url } = await AppProcess.start(['node', 'dist/main.js'], {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'info',
    ...env,
  });
  await app.waitFor(/key changes feed listening/);
  return { app, url };
}

/** A new key in the database, as the `keys` tool stores one: its plaintext and its hash. */
async function newKey(databaseUrl: string): Promise<{ key: string; hash: string }> {
  const { Authorization } = await bearerFor(databaseUrl);
  const key = Authorization.slice('Bearer '.length);
  return { key, hash: hashApiKey(key) };
}

const statusOf = async ({ url }: { url: string }, key: string): Promise<number> =>
  (await httpRequest(`${url}/v1/store/orders`, { headers: { Authorization: `Bearer ${key}` } }))
    .status;

/** Waits until `instance` refuses `key` (401), for at most `withinMs`. */
const refusedWithin = (instance: { url: string }, key: string, withinMs: number): Promise<number> =>
  eventually(
    () => statusOf(instance, key),
    (status) => status === 401,
    withinMs,
  );

/** Changes a key's row without the trigger: no instance hears of it (session_replication_role). */
async function changeUnannounced(db: Pool, sql: string, params: unknown[]): Promise<void> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    await client.query(sql, params);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

/** Ends the feeds' connections, as a network failure or a restart of PostgreSQL would. */
const terminateFeeds = (db: Pool): Promise<unknown> =>
  db.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE application_name = $1 AND datname = current_database()`,
    [KEY_CHANGES_APPLICATION_NAME],
  );

describe('the key changes feed, two built instances on one database', () => {
  let databaseUrl: string;
  let db: Pool;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    await buildOnce();
    databaseUrl = await createTestDatabase();
    db = new Pool({ connectionString: databaseUrl, max: 2 });
    [a, b] = await Promise.all([startInstance(databaseUrl), startInstance(databaseUrl)]);
  }, 300_000);
  afterAll(async () => {
    await Promise.all([a.app.stop(), b.app.stop()]);
    await db.end();
  });

  it('refuses a key revoked with `keys revoke` on both instances at once, though both had it cached', async () => {
    const { key, hash } = await newKey(databaseUrl);
    expect(await statusOf(a, key)).toBe(200);
    expect(await statusOf(b, key)).toBe(200);

    const { rows } = await db.query<{ id: string }>('SELECT id FROM api_keys WHERE key_hash = $1', [
      hash,
    ]);
    await promisify(execFile)(process.execPath, ['dist/cli/keys.js', 'revoke', rows[0].id], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    });
    await refusedWithin(a, key, AT_ONCE_MS);
    await refusedWithin(b, key, AT_ONCE_MS);
  });
});

/** An instance in this process, on its own clock: the key cache's 5 s bound passes at `advance`. */
interface DrivenInstance {
  url: string;
  t: TestApp;
  cache: KeyCache;
  clock: DrivenClock;
}

describe('the key changes feed, two instances on one database, on clocks the test moves', () => {
  // What each instance's key cache is told by its feed, and what the instances log.
  const listening = jest.spyOn(KeyCache.prototype, 'changesFeedListening');
  const confirmed = jest.spyOn(KeyCache.prototype, 'changesFeedConfirmed');
  const lost = jest.spyOn(KeyCache.prototype, 'changesFeedLost');
  const warned = jest.spyOn(PinoLogger.prototype, 'warn');
  const informed = jest.spyOn(PinoLogger.prototype, 'info');

  /** The calls `spy` got on `cache`: the arguments of each. */
  const callsOn = <A extends unknown[]>(spy: jest.SpyInstance<void, A>, cache: KeyCache): A[] =>
    spy.mock.calls.filter((_, i) => spy.mock.contexts[i] === cache);

  /** Resolves once `instance`'s feed has confirmed every change committed up to `at` (its clock). */
  const confirmedUpTo = (instance: DrivenInstance, at: number): Promise<unknown> =>
    eventually(
      () => Promise.resolve(callsOn(confirmed, instance.cache)),
      (calls) => calls.some(([sentAt]) => sentAt >= at),
      AT_ONCE_MS,
    );

  let databaseUrl: string;
  let db: Pool;
  let a: DrivenInstance;
  let b: DrivenInstance;
  /**
   * The keys of the cases that cache a key and then change it unannounced, issued before the
   * instances listen. A key's creation is announced too, and an announcement that lands while
   * the key's first lookup is under way keeps that answer out of the cache (the key changed
   * meanwhile): on a loaded machine, the key would then not be cached at all.
   */
  let cachedPastBound: { key: string; hash: string };
  let cachedFeedLost: { key: string; hash: string };

  async function start(): Promise<DrivenInstance> {
    const t = await createTestApp({ databaseUrl });
    const url = await listen(t);
    const cache = t.app.get(KeyCache);
    await eventually(
      () => Promise.resolve(callsOn(listening, cache).length),
      (n) => n > 0,
      10_000,
    );
    return { t, url, cache, clock: driveClock(t.app) };
  }

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    db = new Pool({ connectionString: databaseUrl, max: 2 });
    cachedPastBound = await newKey(databaseUrl);
    cachedFeedLost = await newKey(databaseUrl);
    [a, b] = await Promise.all([start(), start()]);
  });
  afterAll(async () => {
    await Promise.all([a.t.close(), b.t.close()]);
    await db.end();
    jest.restoreAllMocks();
  });

  it('keeps a key cached past 5 s while the feed is up: a change it is not told of goes unseen, the next is seen at once', async () => {
    const { key, hash } = cachedPastBound;
    expect(await statusOf(a, key)).toBe(200);
    expect(await statusOf(b, key)).toBe(200);

    await changeUnannounced(db, 'UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1', [
      hash,
    ]);
    // Six seconds on: each feed's next heartbeat confirms that it still hears every change.
    for (const instance of [a, b]) {
      instance.clock.advance(6_000);
      await confirmedUpTo(instance, instance.t.app.get(Clock).monotonic());
    }
    // Past the 5 s bound, still admitted: neither instance asked the database again.
    expect(await statusOf(a, key)).toBe(200);
    expect(await statusOf(b, key)).toBe(200);

    // Any change that decides admission is announced, and the instances read the row afresh.
    await db.query(
      `UPDATE api_keys SET banned_until = now() + interval '1 minute' WHERE key_hash = $1`,
      [hash],
    );
    await refusedWithin(a, key, AT_ONCE_MS);
    await refusedWithin(b, key, AT_ONCE_MS);
  });

  it('falls back to the 5 s bound when the feed is lost, logs it, and is told of changes again once back', async () => {
    const { key, hash } = cachedFeedLost;
    expect(await statusOf(a, key)).toBe(200);
    const backBefore = said(informed, /^key changes feed is back/).length;

    await terminateFeeds(db);
    await eventually(
      () => Promise.resolve(callsOn(lost, a.cache).length),
      (n) => n > 0,
      AT_ONCE_MS,
    );
    await changeUnannounced(db, 'UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1', [
      hash,
    ]);
    // Not told of it: admitted until its entry is 5 s old, then asked the database, and refused.
    a.clock.advance(4_900);
    expect(await statusOf(a, key)).toBe(200);
    a.clock.advance(100);
    expect(await statusOf(a, key)).toBe(401);

    expect(said(warned, /^key changes feed lost/)).toContain(
      'key changes feed lost: cached keys are trusted for 5 s only until it returns',
    );
    // Both back, each saying so once.
    await eventually(
      () => Promise.resolve(said(informed, /^key changes feed is back/).length),
      (n) => n >= backBefore + 2,
      10_000,
    );
    expect(said(informed, /^key changes feed is back/)).toHaveLength(backBefore + 2);

    // Back: a key cached from now on is dropped as soon as it changes.
    const other = await newKey(databaseUrl);
    expect(await statusOf(a, other.key)).toBe(200);
    expect(await statusOf(b, other.key)).toBe(200);
    await db.query('UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1', [other.hash]);
    await refusedWithin(a, other.key, AT_ONCE_MS);
    await refusedWithin(b, other.key, AT_ONCE_MS);
  });
});

describe('the last use of a key in continuous use', () => {
  const app = testAppPerSuite();

  it('writes last_used_at about once a minute for a key in continuous use, though it stays cached', async () => {
    const clock = driveClock(app.t.app);
    const lastUsed = async (id: string): Promise<number> => {
      const { rows } = await app.t.db.query<{ last_used_at: Date | null }>(
        'SELECT last_used_at FROM api_keys WHERE id = $1',
        [id],
      );
      return rows[0].last_used_at?.getTime() ?? 0;
    };
    const use = (key: string) => api(app.t, key).get('/v1/store/orders').expect(200);
    const used = await app.t.keys.issue({ plan: 'pro' });
    await use(used.key);
    const first = await eventually(
      () => lastUsed(used.id),
      (t) => t > 0,
      10_000,
    );

    // Used every ten seconds of the service's clock (standing still between), to the last
    // moment of the minute.
    for (let ms = 10_000; ms < 60_000; ms += 10_000) {
      clock.advance(10_000);
      await use(used.key);
    }
    clock.advance(9_999);
    await use(used.key);
    // A key used for the first time is written at once, after any write those uses asked for:
    // once it is there, so would be a write of the other.
    const other = await app.t.keys.issue({ plan: 'pro' });
    await use(other.key);
    await eventually(
      () => lastUsed(other.id),
      (t) => t > 0,
      10_000,
    );
    expect(await lastUsed(used.id)).toBe(first);

    // A minute after the first write: written again.
    clock.advance(1);
    await use(used.key);
    await eventually(
      () => lastUsed(used.id),
      (t) => t > first,
      10_000,
    );
  });
});

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

  /**
   * What the channel says after `sql`. A round trip on the listener brings what was sent before
   * it: one before `sql` takes in what earlier changes announced (a key inserted by another
   * connection), so only what `sql` announced is left to hear.
   */
  async function announced(sql: string, params: unknown[]): Promise<string[]> {
    await listener.query('SELECT 1');
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

  it('announces a new key, with its hash, whoever inserts it', async () => {
    const key = generateApiKey();
    expect(
      await announced(`INSERT INTO api_keys (prefix, key_hash, plan) VALUES ('sk_x', $1, 'free')`, [
        hashApiKey(key),
      ]),
    ).toEqual([hashApiKey(key)]);
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

describe('the key changes feed at shutdown', () => {
  it('exits 0 at SIGTERM, promptly, while its feed cannot reconnect', async () => {
    await buildOnce();
    const databaseUrl = await createTestDatabase();
    const name = databaseUrl.split('/').pop() as string;
    const admin = new Client({ connectionString: databaseUrl.replace(/[^/]+$/, 'postgres') });
    await admin.connect();
    const { app } = await startInstance(databaseUrl, { SHUTDOWN_TIMEOUT_MS: '20000' });
    try {
      // No new connection to its database from now on: the feed's reconnect attempts all fail.
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE application_name = $1 AND datname = $2`,
        [KEY_CHANGES_APPLICATION_NAME, name],
      );
      await app.waitFor(/key changes feed lost/);
      await sleep(1_000);

      const stopping = Date.now();
      app.kill('SIGTERM');
      expect(await app.exited).toEqual({ code: 0, signal: null });
      expect(Date.now() - stopping).toBeLessThan(10_000);
      expect(app.find(/key changes feed is back/)).toBeUndefined();
    } finally {
      await app.stop();
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
      await admin.end();
    }
  }, 300_000);
});
