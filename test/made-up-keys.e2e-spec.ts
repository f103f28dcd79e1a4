import { execFile } from 'node:child_process';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Pool } from 'pg';
import { generateApiKey } from '../src/auth/api-key';
import { APPLICATION_NAME } from '../src/database/data-source-options';
import { AppProcess } from './support/app-process';
import { buildOnce } from './support/build';
import { eventually } from './support/eventually';
import { HttpAnswer, httpRequest } from './support/http';
import { RedisServer } from './support/redis-server';
import { describeWithBinary } from './support/system-binary';
import { createTestDatabase } from './support/test-app';

const ROOT = join(__dirname, '..');

/** A free key issued as an operator does, by the built `keys` tool: another process. */
async function issueWithKeysTool(databaseUrl: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['dist/cli/keys.js', 'create', '--plan', 'free', '--json'],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } },
  );
  return (JSON.parse(stdout) as { key: string }).key;
}

const errorCode = (answer: HttpAnswer): unknown =>
  (JSON.parse(answer.body) as { code?: unknown }).code;

/**
 * Lookups of keys in the database: scans of the index on key hashes, as PostgreSQL counts them
 * (its statistics, flushed by each backend at the latest when it ends).
 */
async function keyLookups(db: Pool): Promise<number> {
  const { rows } = await db.query<{ idx_scan: string }>(
    `SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'UQ_api_keys_key_hash'`,
  );
  return Number(rows[0]?.idx_scan ?? -1);
}

describeWithBinary('redis-server', 'redis-server')(
  'made-up keys from one address, two instances sharing Redis',
  () => {
    // Past the budget of lookups, a made-up key is refused once the instance's set of key hashes
    // is confirmed current (the feed's heartbeat, every second).
    jest.setTimeout(180_000);

    let databaseUrl: string;
    let db: Pool;
    let redis: RedisServer;
    let instances: { app: AppProcess; url: string }[];
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });

    beforeAll(async () => {
      await buildOnce();
      databaseUrl = await createTestDatabase();
      db = new Pool({ connectionString: databaseUrl, max: 1 });
      redis = await RedisServer.start();
      instances = await Promise.all(
        [0, 1].map(async () => {
          const started = await AppProcess.start(['node', 'dist/main.js'], {
            DATABASE_URL: databaseUrl,
            REDIS_URL: redis.url,
            LOG_LEVEL: 'info',
          });
          await started.app.waitFor(/key changes feed listening/);
          return started;
        }),
      );
    }, 300_000);
    afterAll(async () => {
      agent.destroy();
      await Promise.all(instances.map(({ app }) => app.stop()));
      await db.end();
      await redis.stop();
    });

    const send = (i: number, key: string): Promise<HttpAnswer> =>
      httpRequest(`${instances[i % 2].url}/v1/store/orders`, {
        headers: { Authorization: `Bearer ${key}` },
        agent,
      });

    it('never refuse a valid key, seen by neither instance, and cost no lookup past the budget', async () => {
      // Issued before this flood, and never used: no instance has looked it up.
      const issuedBefore = await issueWithKeysTool(databaseUrl);

      const flood: number[] = [];
      for (let i = 0; i < 80; i++) {
        const answer = await send(i, generateApiKey());
        flood.push(answer.status);
        if (answer.status === 429) expect(errorCode(answer)).toBe('RATE_LIMIT_EXCEEDED');
      }
      // As before: 401 while the address has room (60 a minute, across both instances), then 429.
      expect(flood).toEqual([...Array<number>(60).fill(401), ...Array<number>(20).fill(429)]);

      // Issued by another process now: neither instance has seen it either.
      const issuedNow = await issueWithKeysTool(databaseUrl);
      for (const key of [issuedBefore, issuedNow]) {
        for (const i of [0, 1]) {
          const answer = await send(i, key);
          expect({ instance: i, status: answer.status }).toEqual({ instance: i, status: 200 });
          expect(answer.headers['x-ratelimit-limit']).toBe('60');
        }
      }
      // The address itself stays limited.
      expect((await send(0, generateApiKey())).status).toBe(429);
      expect((await send(1, generateApiKey())).status).toBe(429);

      // Stopped, each instance's backends flush their statistics as they end.
      for (const { app } of instances) app.kill('SIGTERM');
      await Promise.all(instances.map(({ app }) => app.exited));
      await eventually(
        async () =>
          (
            await db.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_stat_activity
               WHERE datname = current_database() AND application_name LIKE $1`,
              [`${APPLICATION_NAME}%`],
            )
          ).rows[0].n,
        (n) => n === '0',
      );
      // 60 made-up keys within the budget, and each valid key once per instance: the other 22
      // made-up keys cost none.
      const lookups = await keyLookups(db);
      expect(lookups).toBeGreaterThanOrEqual(60);
      expect(lookups).toBeLessThanOrEqual(60 + 4);
    });
  },
);
