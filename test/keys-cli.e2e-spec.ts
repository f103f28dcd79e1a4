import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api } from './support/client';
import { eventually } from './support/eventually';
import { CliResult, runKeysScript, runKeysTool } from './support/keys-tool';
import { testAppPerSuite } from './support/suite-app';

const packageVersion = (
  JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;

describe('keys command-line tool (npm run keys)', () => {
  // A case that runs `npm run keys` starts a process per command (npm, then TypeScript compiled on
  // the fly): seconds apiece on a loaded machine. A bound on a hang, not a measure.
  jest.setTimeout(120_000);

  const app = testAppPerSuite();

  /** Runs the tool's command line in this process, against this suite's database. */
  const keys = (...args: string[]): Promise<CliResult> => runKeysTool(app.t.databaseUrl, args);
  /**
   * Runs the real tool as an operator would (`npm run keys -- ...`): the cases that show what
   * crosses the process's edge (output, exit codes) as the operator's shell sees it.
   */
  const script = (...args: string[]): Promise<CliResult> => runKeysScript(app.t.databaseUrl, args);

  const keyCount = async (): Promise<number> =>
    Number((await app.t.db.query<{ n: string }>('SELECT count(*) AS n FROM api_keys')).rows[0].n);

  it('creates a key (--json is one JSON object), lists it, revokes it, and the API follows', async () => {
    const created = await script('create', '--plan', 'pro', '--name', 'cli test', '--json');
    expect(created.code).toBe(0);
    const issued = JSON.parse(created.stdout) as Record<string, unknown>;
    expect(issued).toMatchObject({ plan: 'pro', name: 'cli test', perMinute: 300, perDay: 10000 });
    expect(issued.key).toMatch(/^sk_[0-9A-Za-z]{43}$/);
    // Without --scopes: every scope (but keys:admin, granted only by name).
    expect(issued.scopes).toEqual(['*']);
    expect(created.stdout.trim().split('\n')).toHaveLength(1);

    await api(app.t, issued.key as string)
      .get('/v1/store/orders')
      .expect(200);

    const listed = await keys('list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain((issued.id as string).slice(0, 8));
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
    const { id } = await app.t.keys.issue({ plan: 'free' });
    await app.t.db.query(
      `UPDATE api_keys SET banned_until = now() + interval '1 hour' WHERE id = $1`,
      [id],
    );
    const listed = JSON.parse((await keys('list', '--json')).stdout) as {
      id: string;
      bannedUntil: string | null;
    }[];
    expect(listed.find((k) => k.id === id)?.bannedUntil).toEqual(expect.any(String));
    expect(await keys('unban', id)).toMatchObject({ code: 0 });
    const { rows } = await app.t.db.query('SELECT banned_until FROM api_keys WHERE id = $1', [id]);
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
    const result = await script('revoke', '00000000-0000-4000-8000-000000000000');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('No key with id');
  });

  it('creates a key that expires (--expires-in), and lists it with relative times and a short id', async () => {
    const created = await keys(
      'create',
      '--plan',
      'free',
      '--name',
      'ninety',
      '--expires-in',
      '90d',
      '--json',
    );
    expect(created.code).toBe(0);
    const issued = JSON.parse(created.stdout) as { id: string; key: string; expiresAt: string };
    const ninetyDays = Date.now() + 90 * 86_400_000;
    expect(Math.abs(Date.parse(issued.expiresAt) - ninetyDays)).toBeLessThan(60_000);

    const listed = await keys('list');
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header).toMatch(
      /^ID +NAME +PREFIX +PLAN +LIMITS +SCOPES +STATUS +CREATED +LAST USED +EXPIRES$/,
    );
    const row = rows.find((r) => r.startsWith(`${issued.id.slice(0, 8)}  `));
    expect(row).toBeDefined();
    expect(row).not.toContain(issued.id);
    expect(row).toMatch(/ninety .* active +(just now|\d+ seconds? ago) +never +in 90 days$/);

    // A use shows up as "last used" (written by the server, at most once a minute).
    await api(app.t, issued.key).get('/v1/store/orders').expect(200);
    await eventually(
      () =>
        app.t.db.query('SELECT 1 FROM api_keys WHERE id = $1 AND last_used_at IS NOT NULL', [
          issued.id,
        ]),
      (r) => r.rowCount === 1,
      10_000,
    );
    const json = JSON.parse((await keys('list', '--json')).stdout) as Record<string, unknown>[];
    expect(json.find((k) => k.id === issued.id)).toEqual({
      id: issued.id,
      name: 'ninety',
      prefix: expect.stringMatching(/^sk_/),
      plan: 'free',
      perMinute: 60,
      perDay: 1000,
      createdAt: expect.any(String),
      revokedAt: null,
      lastUsedAt: expect.any(String),
      bannedUntil: null,
      expiresAt: issued.expiresAt,
      familyId: issued.id,
      status: 'active',
      scopes: ['*'],
    });
    expect((await keys('list')).stdout).toMatch(
      new RegExp(
        `${issued.id.slice(0, 8)} .* active +(just now|\\d+ seconds? ago) +(just now|\\d+ seconds? ago) +in 90 days`,
      ),
    );
  });

  it('creates a key with --expires-at; once past it, list and show say expired and the API refuses it', async () => {
    // With an offset other than Z: the time is the same instant.
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000);
    // The wall clock at +02:00 is UTC plus two hours (the next day, past 22:00 UTC).
    const local = new Date(at.getTime() + 2 * 3_600_000).toISOString().replace(/\.000Z$/, '+02:00');
    const created = await keys('create', '--plan', 'pro', '--expires-at', local, '--json');
    expect(created.code).toBe(0);
    const issued = JSON.parse(created.stdout) as { id: string; key: string; expiresAt: string };
    expect(issued.expiresAt).toBe(at.toISOString());

    // An hour is long to wait: the expiry is moved into the past, as time would.
    await app.t.db.query(
      `UPDATE api_keys SET expires_at = now() - interval '5 seconds' WHERE id = $1`,
      [issued.id],
    );
    const res = await api(app.t, issued.key).get('/v1/store/orders').expect(401);
    expect(res.headers['www-authenticate']).toContain(
      'error_description="The access token expired"',
    );
    const row = (await keys('list')).stdout
      .split('\n')
      .find((r) => r.startsWith(issued.id.slice(0, 8)));
    expect(row).toMatch(/ expired +.* \d+ seconds ago$/);
    const shown = await keys('show', issued.id.slice(0, 8));
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^Status +expired$/m);
    expect(shown.stdout).toMatch(/^Expires +\S+ \(\d+ seconds ago\)$/m);
  });

  it('shows one key in full, by id or unique prefix, as text or JSON', async () => {
    const { id } = await app.t.keys.issue({ plan: 'business', name: 'shown' });
    const byPrefix = await keys('show', id.slice(0, 6));
    expect(byPrefix.code).toBe(0);
    expect(byPrefix.stdout).toMatch(new RegExp(`^ID +${id}$`, 'm'));
    expect(byPrefix.stdout).toMatch(/^Name +shown$/m);
    expect(byPrefix.stdout).toMatch(/^Plan +business \(1000 per minute, 100000 per day\)$/m);
    expect(byPrefix.stdout).toMatch(/^Last used +never$/m);
    expect(byPrefix.stdout).toMatch(/^Expires +never$/m);
    const asJson = await keys('show', id.toUpperCase(), '--json');
    expect(JSON.parse(asJson.stdout)).toMatchObject({ id, name: 'shown', status: 'active' });
  });

  it('refuses an ambiguous or too short id prefix, and an unknown one, with exit code 1', async () => {
    const ids = ['abcd1234-0000-4000-8000-000000000001', 'abcd1234-0000-4000-8000-000000000002'];
    for (const [i, id] of ids.entries()) {
      await app.t.db.query(
        `INSERT INTO api_keys (id, prefix, key_hash, plan) VALUES ($1, 'sk_amb', repeat($2, 64), 'free')`,
        [id, String(i)],
      );
    }
    const ambiguous = await keys('revoke', 'abcd1234');
    expect(ambiguous).toMatchObject({ code: 1, stdout: '' });
    expect(ambiguous.stderr).toContain('matches more than one key');
    expect(ambiguous.stderr).toContain(ids[0]);
    const { rows } = await app.t.db.query(
      'SELECT 1 FROM api_keys WHERE id = ANY($1) AND revoked_at IS NOT NULL',
      [ids],
    );
    expect(rows).toHaveLength(0);

    expect(await keys('show', 'abc')).toMatchObject({ code: 1 });
    expect((await keys('show', 'ffffffff')).stderr).toContain('No key with id ffffffff');
    expect(await keys('revoke', 'abcd1234-0000-4000-8000-000000000002')).toMatchObject({ code: 0 });
  });

  it('revokes by short id; revoking again says so and exits 0', async () => {
    const { id } = await app.t.keys.issue({ plan: 'free' });
    const first = await keys('revoke', id.slice(0, 8));
    expect(first).toMatchObject({ code: 0 });
    expect(first.stdout).toContain(`Revoked key ${id}`);
    expect(first.stdout).toContain('within 5 seconds');
    const again = await keys('revoke', id);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      new RegExp(
        `^Key ${id} was already revoked (just now|\\d+ seconds? ago); nothing changed$`,
        'm',
      ),
    );
  });

  it('rotates a key: the new one is shown once, the old one works until the grace period ends', async () => {
    const created = JSON.parse(
      (await keys('create', '--plan', 'pro', '--name', 'shop', '--json')).stdout,
    ) as {
      id: string;
      key: string;
    };
    const rotated = await keys('rotate', created.id.slice(0, 8), '--grace', '2h', '--json');
    expect(rotated.code).toBe(0);
    const next = JSON.parse(rotated.stdout) as {
      id: string;
      key: string;
      familyId: string;
      rotated: { id: string; expiresAt: string };
    };
    expect(next).toMatchObject({ name: 'shop', plan: 'pro', perMinute: 300, familyId: created.id });
    expect(next.key).toMatch(/^sk_[0-9A-Za-z]{43}$/);
    expect(next.rotated.id).toBe(created.id);
    expect(
      Math.abs(Date.parse(next.rotated.expiresAt) - (Date.now() + 2 * 3_600_000)),
    ).toBeLessThan(60_000);
    await api(app.t, created.key).get('/v1/store/orders').expect(200);
    await api(app.t, next.key).get('/v1/store/orders').expect(200);

    const shown = (await keys('show', created.id)).stdout;
    expect(shown).toMatch(/^Expires +\S+ \(in 2 hours\)$/m);
    expect(shown).toMatch(new RegExp(`^Later key +${next.id.slice(0, 8)} \\(active\\)$`, 'm'));

    // Without --json: the key once, with the end of the grace period in words. Default grace: 24 h.
    const again = await keys('rotate', next.id);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/keeps working until \S+ \(in 24 hours\)/);
    expect(again.stdout).toMatch(/^Key \(shown once, store it now\): sk_[0-9A-Za-z]{43}$/m);

    // A ban of the family: lifted through either key's id.
    await app.t.db.query(
      `UPDATE api_keys SET banned_until = now() + interval '1 hour' WHERE id = $1 OR family_id = $1`,
      [created.id],
    );
    expect(await keys('unban', created.id.slice(0, 8))).toMatchObject({ code: 0 });
    const { rows } = await app.t.db.query(
      'SELECT count(*)::int AS n FROM api_keys WHERE (id = $1 OR family_id = $1) AND banned_until IS NOT NULL',
      [created.id],
    );
    expect(rows[0]).toEqual({ n: 0 });

    const revoked = await keys('rotate', (await app.t.keys.revoke(created.id)).key.id);
    expect(revoked.code).toBe(2);
    expect(revoked.stderr).toContain('is revoked');
  });

  it('prints help per command and the version, exit code 0', async () => {
    const help = await keys('rotate', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run keys -- rotate <id> \[--grace DURATION\]/);
    expect(help.stdout).toContain('default 24h');
    expect(help.stdout).not.toContain('create --plan');
    const all = await keys('--help');
    expect(all.stdout).toContain('show <id>');
    expect(all.stdout).not.toMatch(/10 seconds/);
    const version = await keys('--version');
    expect(version).toMatchObject({ code: 0, stdout: `${packageVersion}\n` });
  });

  it.each([
    [['create', '--plan', 'free', '--bogus'], 'unknown option --bogus', 'create --plan'],
    [['list', '-x'], 'unknown option -x', 'list [--json]'],
    [['rotate', 'abcd', '--grace'], '--grace needs a value', 'rotate <id>'],
    [['rotate', 'abcd', '--grace', '2 days'], '--grace must be', 'rotate <id>'],
    [['create', '--plan', 'free', '--expires-in', '90'], '--expires-in must be', 'create --plan'],
    [
      ['create', '--plan', 'free', '--expires-at', '2030-02-30T00:00:00Z'],
      '--expires-at must be an RFC 3339 time',
      'create --plan',
    ],
    [
      ['create', '--plan', 'free', '--expires-at', '2030-01-01T00:00:00'],
      '--expires-at must be an RFC 3339 time',
      'create --plan',
    ],
    [['--frobnicate'], 'unknown option --frobnicate', 'Commands:'],
    [
      ['create', '--plan', 'free', '--scopes', 'orders:read,orders:write'],
      '--scopes: unknown scope "orders:write"',
      'create --plan',
    ],
  ])('refuses %j with our message and the usage, exit code 2', async (args, message, usage) => {
    const result = await keys(...args);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain(`keys: ${message}`);
    expect(result.stderr).toContain(usage);
    expect(result.stderr).not.toContain('positional argument');
  });

  it('issues a key restricted with --scopes: create, list, show and --json say so, the API follows, a rotation keeps them', async () => {
    const created = await keys(
      'create',
      '--plan',
      'pro',
      '--name',
      'reader',
      '--scopes',
      'orders:read',
      '--json',
    );
    expect(created.code).toBe(0);
    const issued = JSON.parse(created.stdout) as { id: string; key: string; scopes: string[] };
    expect(issued.scopes).toEqual(['orders:read']);

    await api(app.t, issued.key).get('/v1/store/orders').expect(200);
    const refused = await api(app.t, issued.key).delete('/v1/store/orders/424242').expect(403);
    expect(refused.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', status: 403 });
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer realm="store-orders", error="insufficient_scope", scope="orders:cancel"',
    );

    const row = (await keys('list')).stdout
      .split('\n')
      .find((r) => r.startsWith(issued.id.slice(0, 8)));
    expect(row).toMatch(/ reader .* 300\/min 10000\/day +orders:read +active /);
    const shown = await keys('show', issued.id);
    expect(shown.stdout).toMatch(/^Scopes +orders:read$/m);
    const listed = JSON.parse((await keys('list', '--json')).stdout) as {
      id: string;
      scopes: string[];
    }[];
    expect(listed.find((k) => k.id === issued.id)?.scopes).toEqual(['orders:read']);

    const rotated = JSON.parse((await keys('rotate', issued.id, '--json')).stdout) as {
      scopes: string[];
    };
    expect(rotated.scopes).toEqual(['orders:read']);

    // Text output: the scopes, and what a key without --scopes has.
    const plain = await keys('create', '--plan', 'free', '--scopes', 'orders:cancel,orders:read');
    expect(plain.stdout).toMatch(/^Scopes: orders:cancel, orders:read$/m);
    const full = await keys('create', '--plan', 'free');
    expect(full.stdout).toMatch(/^Scopes: \* \(every scope but keys:admin\)$/m);
  });

  it('lists the scopes it knows in the help of create', async () => {
    const help = await keys('create', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--scopes LIST');
    for (const scope of ['orders:read', 'orders:cancel', 'keys:admin']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${scope} +\\S`, 'm'));
    }
  });

  it('never prints a control character from a key name: list, show and audit write them out, --json escapes them, create refuses them', async () => {
    const hostile = '\u001b]0;PWNED\u0007\u001b[31m';
    const escaped = '\\x1b]0;PWNED\\x07\\x1b[31m';
    // A name as the admin API or SQL could have set it, C1 and a bidi override besides.
    const name = `${hostile}\u009b\u202e`;
    const { rows } = await app.t.db.query<{ id: string }>(
      `INSERT INTO api_keys (name, prefix, key_hash, plan)
       VALUES ($1, 'sk_escape', md5(random()::text) || md5(random()::text), 'pro') RETURNING id`,
      [name],
    );
    const { id } = rows[0];
    await app.t.db.query(
      `INSERT INTO audit_events (actor, action, target) VALUES ($1, 'key.revoked', $2)`,
      [`cli:${hostile}`, `key:${id}`],
    );
    /** Nothing a terminal acts on: no control character but the lines' own newlines. */
    // eslint-disable-next-line no-control-regex -- the characters under test
    const inert = /^[^\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$/;

    const listed = await keys('list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(inert);
    const row = listed.stdout.split('\n').find((r) => r.startsWith(id.slice(0, 8)));
    expect(row).toContain(`  ${escaped}\\x9b\\u202e  sk_escape…  pro  `);

    const shown = await keys('show', id);
    expect(shown.stdout).toMatch(inert);
    expect(shown.stdout).toContain(`\nName       ${escaped}\\x9b\\u202e\n`);

    const audit = await keys('audit', '--target', `key:${id}`);
    expect(audit.stdout).toMatch(inert);
    expect(audit.stdout).toContain(`cli:${escaped}  key.revoked`);

    // JSON: the same name to a parser, every control character as its \u escape.
    for (const args of [
      ['list', '--json'],
      ['show', id, '--json'],
    ]) {
      const json = await keys(...args);
      expect(json.stdout).toMatch(inert);
      const parsed = JSON.parse(json.stdout) as
        { id: string; name: string } | { id: string; name: string }[];
      expect([parsed].flat().find((k) => k.id === id)?.name).toBe(name);
    }
    const auditJson = await keys('audit', '--target', `key:${id}`, '--json');
    expect(auditJson.stdout).toMatch(inert);
    expect((JSON.parse(auditJson.stdout) as { data: { actor: string }[] }).data[0].actor).toBe(
      `cli:${hostile}`,
    );

    const before = await keyCount();
    const refused = await keys('create', '--plan', 'free', '--name', `shop${hostile}`);
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toContain('keys: --name must not contain control characters');
    expect(refused.stderr).toContain(`shop${escaped}`);
    expect(refused.stderr).toMatch(inert);
    expect(refused.stderr).toContain('create --plan');
    expect(await keyCount()).toBe(before);
  });

  it('refuses an expiry in the past, writing nothing', async () => {
    const before = await keyCount();
    const result = await script(
      'create',
      '--plan',
      'free',
      '--expires-at',
      '2020-01-01T00:00:00+01:00',
    );
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain('not in the future');
    expect(await keyCount()).toBe(before);
  });
});
