import { execFile } from 'node:child_process';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Pool } from 'pg';
import { generateApiKey } from '../src/auth/api-key';
import { ApiKeysRepository } from '../src/auth/api-keys.repository';
import { APPLICATION_NAME } from '../src/database/data-source-options';
import { AppProcess } from './support/app-process';
import { buildOnce } from './support/build';
import { eventually } from './support/eventually';
import { HttpAnswer, httpRequest } from './support/http';
import { RedisServer } from './support/redis-server';
import { describeWithBinary } from './support/system-binary';
import { createTestApp, createTestDatabase, listen, TestApp } from './support/test-app';

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

/**
 * Sends every request at once, pipelined on one connection (all written before any answer comes,
 * so the server has them all in flight together), and returns their statuses in order.
 */
function pipelined(url: string, requests: Record<string, string>[]): Promise<number[]> {
  const { hostname, port } = new URL(url);
  const text = requests
    .map((headers, i) => {
      const last = i === requests.length - 1;
      const fields = { Host: `${hostname}:${port}`, ...headers };
      const lines = Object.entries(fields).map(([name, value]) => `${name}: ${value}\r\n`);
      return `GET /v1/store/orders HTTP/1.1\r\n${lines.join('')}${last ? 'Connection: close\r\n' : ''}\r\n`;
    })
    .join('');
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    socket.setTimeout(90_000, () => socket.destroy(new Error('no end of the answers in 90 s')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const answers = Buffer.concat(chunks).toString('latin1');
      resolve([...answers.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])));
    });
    socket.write(text);
  });
}

const bearer = (key: string): string => `Bearer ${key}`;

/** The in-process store, or Redis (when redis-server is installed). */
const STORES = [
  { name: 'in-process counters', redis: false, describe },
  { name: 'Redis', redis: true, describe: describeWithBinary('redis-server', 'redis-server') },
];

for (const store of STORES) {
  store.describe(`made-up keys in flight at once (${store.name})`, () => {
    jest.setTimeout(180_000);

    let redis: RedisServer | undefined;
    beforeAll(async () => {
      await buildOnce();
      if (store.redis) redis = await RedisServer.start();
    }, 300_000);
    afterAll(async () => {
      await redis?.stop();
    });

    /**
     * A fresh instance (its own minute of lookups), behind a proxy it trusts, and the hashes it
     * asks its database for: each call of the key store's lookup is one (a spy that calls
     * through: the database answers).
     */
    async function instance(): Promise<{ t: TestApp; url: string; lookups: () => number }> {
      const env: Record<string, string> = { TRUST_PROXY: 'true' };
      if (redis) env.REDIS_URL = redis.url;
      const t = await createTestApp({ env });
      const url = await listen(t);
      const spy = jest.spyOn(t.app.get(ApiKeysRepository), 'findActive');
      return { t, url, lookups: () => spy.mock.calls.length };
    }

    it('cost at most 60 lookups from one address, and never refuse a valid key issued before', async () => {
      const { t, url, lookups } = await instance();
      try {
        // Issued by another process before the flood, and never used: this instance has not
        // looked it up.
        const issuedBefore = await issueWithKeysTool(t.databaseUrl);
        const from = { 'X-Forwarded-For': '198.51.100.7' };
        const madeUp = Array.from({ length: 300 }, () => ({
          ...from,
          Authorization: bearer(generateApiKey()),
        }));
        const statuses = await pipelined(url, madeUp);
        expect(statuses).toHaveLength(300);
        expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
        // Every one in flight at once: the address's 60 and no more.
        expect(lookups()).toBe(60);

        // The address is past its limits now (429s, then a ban): the valid key is still served.
        const [valid] = await pipelined(url, [{ ...from, Authorization: bearer(issuedBefore) }]);
        expect(valid).toBe(200);
        expect(lookups()).toBeLessThanOrEqual(60 + 1);
      } finally {
        await t.close();
      }
    });

    it('cost at most 1,000 lookups a minute from any number of addresses, and never refuse a valid key issued before', async () => {
      const { t, url, lookups } = await instance();
      try {
        const issuedBefore = await issueWithKeysTool(t.databaseUrl);
        // 40 addresses of 40 made-up keys each: every address within its own 60, 1,600 in all,
        // on 8 connections; the valid key comes last on one of them, amid the flood.
        const connections = Array.from({ length: 8 }, (_, c) =>
          Array.from({ length: 200 }, (_, i) => ({
            'X-Forwarded-For': `203.0.113.${(c * 200 + i) % 40}`,
            Authorization: bearer(generateApiKey()),
          })),
        );
        connections[7].push({
          'X-Forwarded-For': '192.0.2.1',
          Authorization: bearer(issuedBefore),
        });
        const answers = await Promise.all(connections.map((requests) => pipelined(url, requests)));
        const valid = answers[7].pop();
        expect(valid).toBe(200);
        const madeUp = answers.flat();
        expect(madeUp).toHaveLength(1_600);
        expect(madeUp.filter((s) => s !== 401)).toEqual([]);
        // No address spent its own budget: the instance's 1,000 (and the valid key) and no more.
        expect(lookups()).toBeGreaterThanOrEqual(1_000);
        expect(lookups()).toBeLessThanOrEqual(1_000 + 1);
      } finally {
        await t.close();
      }
    });
  });
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
      for (let i = 0; i < 60; i++) flood.push((await send(i, generateApiKey())).status);
      // The rest at once, each on a connection of its own: those past the budget are answered at
      // the feed's next heartbeat, together.
      const past = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          httpRequest(`${instances[i % 2].url}/v1/store/orders`, {
            headers: { Authorization: `Bearer ${generateApiKey()}` },
          }),
        ),
      );
      for (const answer of past) {
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
