import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { api } from './support/client';
import { createTestApp, TestApp } from './support/test-app';

const exec = promisify(execFile);

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

describe('keys command-line tool (npm run keys)', () => {
  // Each case starts the real tool (npm, then TypeScript compiled on the fly) once or more: seconds
  // apiece alone, several times that on a loaded machine. A bound on a hang, not a measure.
  jest.setTimeout(120_000);

  let t: TestApp;

  /** Runs the real tool as an operator would, against this suite's database. */
  async function keys(...args: string[]): Promise<CliResult> {
    try {
      const { stdout, stderr } = await exec('npm', ['run', '-s', 'keys', '--', ...args], {
        env: { ...process.env, DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  const keyCount = async (): Promise<number> =>
    Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM api_keys')).rows[0].n);

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('creates a key (--json is one JSON object), lists it, revokes it, and the API follows', async () => {
    const created = await keys('create', '--plan', 'pro', '--name', 'cli test', '--json');
    expect(created.code).toBe(0);
    const issued = JSON.parse(created.stdout) as Record<string, unknown>;
    expect(issued).toMatchObject({ plan: 'pro', name: 'cli test', perMinute: 300, perDay: 10000 });
    expect(issued.key).toMatch(/^sk_[0-9A-Za-z]{43}$/);
    expect(created.stdout.trim().split('\n')).toHaveLength(1);

    await api(t, issued.key as string)
      .get('/v1/store/orders')
      .expect(200);

    const listed = await keys('list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(issued.id as string);
    expect(listed.stdout).not.toContain(issued.key as string);

    const revoked = await keys('revoke', issued.id as string);
    expect(revoked).toMatchObject({ code: 0 });
    const json = JSON.parse((await keys('list', '--json')).stdout) as {
      id: string;
      revokedAt: string | null;
    }[];
    expect(json.find((k) => k.id === issued.id)?.revokedAt).toEqual(expect.any(String));
  });

  it('creates an enterprise key with its own limits', async () => {
    const created = await keys(
      'create',
      '--plan',
      'enterprise',
      '--per-minute',
      '100',
      '--per-day',
      '3',
      '--json',
    );
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      plan: 'enterprise',
      perMinute: 100,
      perDay: 3,
    });
  });

  it('unbans a banned key', async () => {
    const { id } = await t.keys.issue({ plan: 'free' });
    await t.db.query(`UPDATE api_keys SET banned_until = now() + interval '1 hour' WHERE id = $1`, [
      id,
    ]);
    const listed = JSON.parse((await keys('list', '--json')).stdout) as {
      id: string;
      bannedUntil: string | null;
    }[];
    expect(listed.find((k) => k.id === id)?.bannedUntil).toEqual(expect.any(String));
    expect(await keys('unban', id)).toMatchObject({ code: 0 });
    const { rows } = await t.db.query('SELECT banned_until FROM api_keys WHERE id = $1', [id]);
    expect(rows[0].banned_until).toBeNull();
  });

  it.each([
    [[]],
    [['frobnicate']],
    [['create']],
    [['create', '--plan', 'gold']],
    [['create', '--plan', 'enterprise']],
    [['create', '--plan', 'enterprise', '--per-minute', '10']],
    [['create', '--plan', 'enterprise', '--per-minute', '0', '--per-day', '5']],
    [['create', '--plan', 'enterprise', '--per-minute', 'ten', '--per-day', '5']],
    [['create', '--plan', 'pro', '--per-minute', '10', '--per-day', '10']],
    [['create', '--plan', 'free', '--bogus']],
    [['revoke']],
    [['unban', 'a', 'b']],
  ])('refuses %j with a message and exit code 2, writing nothing', async (args) => {
    const before = await keyCount();
    const result = await keys(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^keys: .+/);
    expect(result.stdout).toBe('');
    expect(await keyCount()).toBe(before);
  });

  it('says so, with exit code 1, when the key id does not exist', async () => {
    const result = await keys('revoke', '00000000-0000-4000-8000-000000000000');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('No key with id');
  });
});
