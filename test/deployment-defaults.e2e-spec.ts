/**
 * Deployment defaults a careless operator would otherwise ship: the shipped files read as they
 * are (no default password, the service on a role that is no superuser and holds only row
 * grants, and only SELECT and INSERT on the audit trail; Redis behind a password, Grafana on this
 * host only, nginx's access log without the request line, its error log at `crit`), and the
 * built service as the image runs it (metrics bound to HOST, a warning for TRUST_PROXY=true,
 * keep-alive connections closed once shutting down).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { ENV, withClient } from './setup/clusters';
import { AppProcess } from './support/app-process';
import { bearerFor } from './support/auth';
import { buildOnce } from './support/build';
import { httpRequest } from './support/http';
import {
  changesNotRefused,
  RUNTIME_ROLE_RIGHTS,
  tableRightsOf,
} from './support/runtime-role-rights';
import { runKeysTool } from './support/keys-tool';
import { createTestDatabase } from './support/test-app';

const ROOT = join(__dirname, '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

interface ComposeService {
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
}
const composeText = read('docker/docker-compose.yml');
const compose = parse(composeText, { merge: true }) as { services: Record<string, ComposeService> };
const nginx = read('docker/nginx.conf');
const rolesScript = read('docker/postgres/initdb.d/10-roles.sh');

/** The user name of a compose `postgres://user:password@host/db` URL. */
const userOf = (url: string | undefined): string =>
  /^postgres:\/\/([^:@]+)/.exec(url ?? '')?.[1] ?? '';

describe('shipped deployment files', () => {
  it('give no password a default: compose refuses to start until each is set', () => {
    const variables = [...composeText.matchAll(/\$\{(\w*(?:PASSWORD|SECRET)\w*)(:?[-?])?/g)];
    expect(variables.length).toBeGreaterThan(0);
    for (const [, name, operator] of variables)
      expect({ name, operator }).toEqual({ name, operator: ':?' });
    expect(compose.services.postgres.environment?.POSTGRES_PASSWORD).toMatch(
      /^\$\{POSTGRES_PASSWORD:\?[^}]+\}$/,
    );
  });

  it('connect the instances as store_app and the migration as store_migrate, never the superuser', () => {
    const superuser = compose.services.postgres.environment?.POSTGRES_USER;
    expect(superuser).toBe('postgres');
    for (const name of ['app1', 'app2']) {
      expect(userOf(compose.services[name].environment?.DATABASE_URL)).toBe('store_app');
    }
    expect(userOf(compose.services.migrate.environment?.DATABASE_URL)).toBe('store_migrate');
    expect(compose.services.postgres.volumes).toContain(
      './postgres/initdb.d:/docker-entrypoint-initdb.d:ro',
    );
  });

  it('run Redis with a password, and give it to the instances and the health check', () => {
    const command = (compose.services.redis.command ?? []).join(' ');
    expect(command).toMatch(/--requirepass "\$\$REDIS_PASSWORD"/);
    expect(compose.services.redis.environment?.REDIS_PASSWORD).toMatch(/^\$\{REDIS_PASSWORD:\?/);
    expect(compose.services.redis.healthcheck?.test.join(' ')).toContain('REDISCLI_AUTH=');
    for (const name of ['app1', 'app2']) {
      expect(compose.services[name].environment?.REDIS_URL).toMatch(
        /^redis:\/\/:\$\{REDIS_PASSWORD:\?[^}]+\}@redis:6379$/,
      );
    }
  });

  it('publish Grafana and Prometheus on 127.0.0.1 only', () => {
    expect(compose.services.grafana.ports).toEqual([
      expect.stringMatching(/^127\.0\.0\.1:\$\{GRAFANA_PORT:-\d+\}:3000$/),
    ]);
    expect(compose.services.prometheus.ports).toEqual([expect.stringMatching(/^127\.0\.0\.1:/)]);
  });

  it("log nginx's requests without the request line, its query string or the Referer", () => {
    const formats = new Map(
      [...nginx.matchAll(/log_format\s+(\w+)((?:\s+(?:escape=\w+|'[^']*'))+)\s*;/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    const accessLogs = [...nginx.matchAll(/^\s*access_log\s+([^;]+);/gm)].map((m) =>
      m[1].trim().split(/\s+/),
    );
    expect(accessLogs.length).toBeGreaterThan(0);
    for (const [target, format] of accessLogs) {
      if (target === 'off') continue;
      // Without a format nginx writes `combined`: "$request" and "$http_referer" verbatim.
      expect({ target, format }).toEqual({ target, format: expect.any(String) });
      const text = formats.get(format) ?? '';
      expect(text).not.toBe('');
      // $request is the raw request line; $request_method, $request_time ... are not.
      const logged = [
        '$request',
        '$request_uri',
        '$uri',
        '$query_string',
        '$args',
        '$arg_',
        '$http_referer',
      ].filter(
        (v) => new RegExp(`\\${v}(?![a-z_])`).test(text) || (v === '$arg_' && text.includes(v)),
      );
      expect({ format, logged }).toEqual({ format, logged: [] });
    }
  });

  it("keep requests out of nginx's error log: one, for nginx and every request, at `crit`", () => {
    // nginx's error log names a request's line, upstream URL and Referer in each line about it;
    // its upstream failures are written at `error` and `warn` (test/nginx-error-log.e2e-spec.ts).
    const errorLogs = [...nginx.matchAll(/^(\s*)error_log\s+([^;]+);/gm)].map((m) => ({
      indent: m[1],
      args: m[2].trim().split(/\s+/),
    }));
    expect(errorLogs).toEqual([{ indent: '', args: ['/dev/stderr', 'crit'] }]);
  });

  describe('the PostgreSQL roles of docker/postgres/initdb.d/10-roles.sh', () => {
    // Roles belong to the whole cluster: this run's names are its own.
    const suffix = randomBytes(4).toString('hex');
    const migrateRole = `store_migrate_${suffix}`;
    const appRole = `store_app_${suffix}`;
    const password = randomBytes(12).toString('hex');
    let adminUrl: string;
    let databaseUrl: (user: string) => string;

    beforeAll(async () => {
      await buildOnce();
      const templateUrl = process.env[ENV.url] ?? '';
      const database = `roles_${suffix}`;
      adminUrl = templateUrl.replace(/[^/]+$/, database);
      await withClient(templateUrl.replace(/[^/]+$/, 'postgres'), (c) =>
        c.query(`CREATE DATABASE ${database}`),
      );
      // The script's SQL, with psql's variables put in as psql would.
      const sql = (/<<'SQL'\n([\s\S]*?)\nSQL/.exec(rolesScript)?.[1] ?? '')
        .replaceAll('store_migrate', migrateRole)
        .replaceAll('store_app', appRole)
        .replaceAll(':"db"', `"${database}"`)
        .replaceAll(":'migrate_password'", `'${password}'`)
        .replaceAll(":'app_password'", `'${password}'`);
      expect(sql).toContain('CREATE ROLE');
      await withClient(adminUrl, (c) => c.query(sql));
      const url = new URL(adminUrl);
      databaseUrl = (user) => {
        const u = new URL(url);
        u.username = user;
        u.password = password;
        return u.toString();
      };
      // The migration as the compose `migrate` service runs it, as the migration role.
      await promisify(execFile)('node', ['dist/database/migrate.js'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl(migrateRole) },
        timeout: 60_000,
      });
    }, 240_000);

    afterAll(async () => {
      const database = new URL(adminUrl).pathname.slice(1);
      await withClient(adminUrl.replace(/[^/]+$/, 'postgres'), async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await c.query(`DROP ROLE IF EXISTS ${appRole}`);
        await c.query(`DROP ROLE IF EXISTS ${migrateRole}`);
      });
    });

    it('make neither role a superuser, and let the instances role read and write rows only', async () => {
      await withClient(databaseUrl(appRole), async (c) => {
        const { rows } = await c.query<Record<string, boolean>>(
          `SELECT rolsuper, rolcreaterole, rolcreatedb, rolbypassrls FROM pg_roles WHERE rolname = current_user`,
        );
        expect(rows[0]).toEqual({
          rolsuper: false,
          rolcreaterole: false,
          rolcreatedb: false,
          rolbypassrls: false,
        });
        for (const ddl of [
          'CREATE TABLE intruder (x int)',
          'DROP TABLE orders',
          'TRUNCATE orders',
          'ALTER TABLE orders ADD COLUMN x int',
        ]) {
          await expect(c.query(ddl)).rejects.toThrow(/permission denied|must be owner/);
        }
        await expect(c.query('SELECT count(*) FROM orders')).resolves.toBeDefined();
      });
      await withClient(databaseUrl(migrateRole), async (c) => {
        const { rows } = await c.query<{ rolsuper: boolean }>(
          `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`,
        );
        expect(rows[0].rolsuper).toBe(false);
      });
    });

    it('let the instances role read and append audit events, never change nor remove one', async () => {
      await withClient(databaseUrl(appRole), async (c) => {
        await c.query(
          `INSERT INTO audit_events (actor, action, target) VALUES ('cli:ops', 'key.created', 'key:grants')`,
        );
        const { rows } = await c.query(
          "SELECT actor FROM audit_events WHERE target = 'key:grants'",
        );
        expect(rows).toEqual([{ actor: 'cli:ops' }]);
        // Refused by the grants, before the table's trigger would refuse them.
        for (const change of [
          "UPDATE audit_events SET actor = 'cli:someone-else'",
          'DELETE FROM audit_events',
          'TRUNCATE audit_events',
        ]) {
          await expect(c.query(change)).rejects.toThrow('permission denied for table audit_events');
        }
      });
    });

    it('let the instances role delete no key nor order, and only read the cursor secret', async () => {
      await withClient(adminUrl, async (c) => {
        expect(await tableRightsOf(c, appRole)).toEqual(RUNTIME_ROLE_RIGHTS);
      });
      await withClient(databaseUrl(appRole), async (c) => {
        expect(await changesNotRefused(c)).toEqual([]);
      });
    });

    it('run the keys tool as the instances role: create, rotate, unban, revoke, audit', async () => {
      const url = databaseUrl(appRole);
      const created = await runKeysTool(url, ['create', '--plan', 'pro', '--json']);
      expect(created).toMatchObject({ code: 0 });
      const { id } = JSON.parse(created.stdout) as { id: string };
      for (const args of [
        ['rotate', id],
        ['unban', id],
        ['revoke', id],
      ]) {
        expect(await runKeysTool(url, args)).toMatchObject({ code: 0 });
      }
      const audit = await runKeysTool(url, ['audit', '--target', `key:${id}`, '--json']);
      expect(audit).toMatchObject({ code: 0 });
      const { data } = JSON.parse(audit.stdout) as { data: { action: string }[] };
      expect(data.map((event) => event.action)).toEqual(
        expect.arrayContaining(['key.created', 'key.revoked']),
      );
    }, 120_000);

    it('serve the API as the instances role: list, cancel, keys checked', async () => {
      await withClient(databaseUrl(migrateRole), (c) =>
        c.query(
          `INSERT INTO orders (pet_id, quantity, status) VALUES (1, 1, 'pending'), (2, 1, 'pending')`,
        ),
      );
      const auth = await bearerFor(databaseUrl(migrateRole));
      const { app, url } = await AppProcess.start(['node', 'dist/main.js'], {
        DATABASE_URL: databaseUrl(appRole),
      });
      try {
        const list = await httpRequest(`${url}/v1/store/orders`, { headers: auth });
        expect(list.status).toBe(200);
        const [first] = JSON.parse(list.body) as { id: number }[];
        const cancel = await httpRequest(`${url}/v1/store/orders/${first.id}`, {
          method: 'DELETE',
          headers: auth,
        });
        expect(cancel.status).toBe(204);
        expect((await httpRequest(`${url}/health/ready`)).status).toBe(200);
      } finally {
        await app.stop();
      }
    }, 60_000);
  });
});

describe('the built service as the image runs it', () => {
  let databaseUrl: string;

  beforeAll(async () => {
    await buildOnce();
    databaseUrl = await createTestDatabase();
  }, 240_000);

  describe('with HOST=127.0.0.1 and TRUST_PROXY=true', () => {
    let app: AppProcess;
    let url: string;
    let metricsUrl: string | undefined;

    beforeAll(async () => {
      ({ app, url, metricsUrl } = await AppProcess.start(['node', 'dist/main.js'], {
        DATABASE_URL: databaseUrl,
        HOST: '127.0.0.1',
        METRICS_PORT: '0',
        TRUST_PROXY: 'true',
        SHUTDOWN_DRAIN_DELAY_MS: '1000',
      }));
    }, 60_000);
    afterAll(() => app.stop());

    it('serves /metrics on 127.0.0.1 only, not on every interface', async () => {
      expect((await httpRequest(`${metricsUrl ?? '?'}/metrics`)).status).toBe(200);
      // Another loopback address reaches a listener on every interface, not one on 127.0.0.1.
      const elsewhere = metricsUrl?.replace('127.0.0.1', '127.0.0.2') ?? '?';
      await expect(httpRequest(`${elsewhere}/metrics`)).rejects.toMatchObject({
        code: 'ECONNREFUSED',
      });
    });

    it('warns at start that TRUST_PROXY=true lets every client choose its address', () => {
      const warning = app.json().find((l) => String(l.msg).startsWith('TRUST_PROXY=true'));
      expect(warning).toMatchObject({ level: 40, context: 'Bootstrap' });
      expect(String(warning?.msg)).toMatch(/any client chooses the address/);
    });

    it('closes keep-alive connections once stopping, and still exits 0', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const before = await httpRequest(`${url}/health/live`, { agent });
        expect(before.headers.connection).toBe('keep-alive');
        app.kill('SIGTERM');
        await app.waitFor(/readiness is now 503/);
        // A proxy's pooled connection: the answer tells it to open its next one elsewhere.
        const during = await httpRequest(`${url}/health/live`, { agent });
        expect(during.status).toBe(200);
        expect(during.headers.connection).toBe('close');
        expect(await app.exited).toEqual({ code: 0, signal: null });
      } finally {
        agent.destroy();
      }
    }, 60_000);
  });

  it('gives no warning for a hop count, and serves metrics on every interface without HOST', async () => {
    const { app, metricsUrl } = await AppProcess.start(['node', 'dist/main.js'], {
      DATABASE_URL: databaseUrl,
      METRICS_PORT: '0',
      TRUST_PROXY: '1',
    });
    try {
      expect(app.find(/TRUST_PROXY/)).toBeUndefined();
      const elsewhere = metricsUrl?.replace('127.0.0.1', '127.0.0.2') ?? '?';
      expect((await httpRequest(`${elsewhere}/metrics`)).status).toBe(200);
    } finally {
      await app.stop();
    }
  }, 60_000);
});
