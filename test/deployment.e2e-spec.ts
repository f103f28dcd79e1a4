import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Pool } from 'pg';
import { parse } from 'yaml';
// Every module's settings are declared as its files load: the application's, all of them.
import '../src/app.module';
import { environmentVariableNames, validateEnvironment } from '../src/config/environment';
import { ENV, withClient } from './setup/clusters';
import { AppProcess } from './support/app-process';
import { bearerFor } from './support/auth';
import { buildOnce } from './support/build';
import { httpRequest } from './support/http';
import { RedisServer } from './support/redis-server';
import { describeWithBinary } from './support/system-binary';
import { createTestDatabase } from './support/test-app';

const ROOT = join(__dirname, '..');
const APP_IMAGE = 'store-orders-service:local';

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
}

interface PrometheusConfig {
  rule_files: string[];
  scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
}

const compose = parse(readFileSync(join(ROOT, 'docker/docker-compose.yml'), 'utf8'), {
  merge: true,
}) as { services: Record<string, ComposeService> };
const dockerfile = readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8');
const nginx = readFileSync(join(ROOT, 'docker/nginx.conf'), 'utf8');

/** Made-up values of the required variables that have a form (a key), as an operator sets them. */
const MADE_UP: Record<string, string> = {
  WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
};

/**
 * Compose's interpolation with nothing set in the environment but the variables it requires
 * (`${NAME:?message}`, the passwords and keys): `${NAME:-default}` gives its default, those a
 * made-up value.
 */
function interpolate(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [
      k,
      v
        .replace(/\$\{\w+:-([^}]*)\}/g, '$1')
        .replace(
          /\$\{(\w+):\?[^}]*\}/g,
          (_all, name: string) => MADE_UP[name] ?? 'set-by-the-operator',
        ),
    ]),
  );
}

/** The JSON-array instruction of the Dockerfile's last stage, e.g. CMD ["node", "dist/main.js"]. */
function instruction(name: 'CMD' | 'HEALTHCHECK'): string[] {
  const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const line = finalStage
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .find((l) => l.startsWith(`${name} `));
  const json = /(\[.*\])\s*$/.exec(line ?? '')?.[1];
  if (!json) throw new Error(`no exec-form ${name} in the Dockerfile's final stage`);
  return JSON.parse(json) as string[];
}

const appServices = Object.entries(compose.services).filter(([, s]) => s.image === APP_IMAGE);
/** The API instances behind nginx; the worker, from the same image, serves no HTTP. */
const servingServices = appServices.filter(([name]) => name !== 'migrate' && name !== 'worker');
const workingServices = appServices.filter(([name]) => name !== 'migrate');
const START_COMMAND = instruction('CMD');
const MIGRATE_COMMAND = compose.services.migrate.command ?? [];

describe('docker files', () => {
  it('has PostgreSQL, Redis, a one-shot migration, two API instances behind nginx, a worker, Prometheus and Grafana', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      [
        'app1',
        'app2',
        'grafana',
        'lb',
        'migrate',
        'postgres',
        'prometheus',
        'redis',
        'worker',
      ].sort(),
    );
    expect(servingServices.map(([name]) => name)).toEqual(['app1', 'app2']);
    for (const [name, service] of servingServices) {
      expect([name, service.environment?.SERVICE_ROLES]).toEqual([name, 'api']);
    }
    expect(compose.services.worker.environment?.SERVICE_ROLES).toBe('worker');
    for (const [, service] of workingServices) {
      expect(service.depends_on?.migrate).toEqual({
        condition: 'service_completed_successfully',
      });
    }
    expect(compose.services.lb.volumes).toContain('./nginx.conf:/etc/nginx/nginx.conf:ro');
    expect(Object.keys(compose.services.lb.depends_on ?? {}).sort()).toEqual(['app1', 'app2']);
  });

  it('passes the app and migration services only variables the app validates, all valid', () => {
    for (const [name, service] of appServices) {
      const env = service.environment ?? {};
      for (const variable of Object.keys(env)) {
        const known = environmentVariableNames().includes(variable);
        expect({ service: name, variable, known }).toEqual({
          service: name,
          variable,
          known: true,
        });
      }
      expect(() => validateEnvironment(interpolate(env))).not.toThrow();
    }
  });

  it('points nginx at every app instance on the port it listens on', () => {
    for (const [name, service] of servingServices) {
      expect(nginx).toContain(`server ${name}:${service.environment?.PORT ?? '3000'}`);
    }
    expect(nginx.match(/^\s*server \S+:\d+/gm)).toHaveLength(servingServices.length);
  });

  it('has Prometheus scrape every app instance on its METRICS_PORT, with the alert rules', () => {
    const prometheus = parse(
      readFileSync(join(ROOT, 'docker/prometheus/prometheus.yml'), 'utf8'),
    ) as PrometheusConfig;
    const targets = prometheus.scrape_configs.flatMap((job) =>
      job.static_configs.flatMap((c) => c.targets),
    );
    expect(targets.sort()).toEqual(
      workingServices.map(([name, s]) => `${name}:${s.environment?.METRICS_PORT ?? '?'}`).sort(),
    );
    expect(prometheus.rule_files).toEqual(['alerts.yml']);
    expect(compose.services.prometheus.volumes).toContain('./prometheus:/etc/prometheus:ro');
  });

  it('provisions Grafana with the Prometheus datasource and the dashboard, on a port of this host, its password from the environment', () => {
    const grafana = compose.services.grafana;
    expect(grafana.ports).toEqual([
      expect.stringMatching(/^127\.0\.0\.1:\$\{GRAFANA_PORT:-\d+\}:3000$/),
    ]);
    expect(grafana.environment?.GF_SECURITY_ADMIN_USER).toBe('${GRAFANA_ADMIN_USER:-admin}');
    // No default: compose refuses to start without it.
    expect(grafana.environment?.GF_SECURITY_ADMIN_PASSWORD).toMatch(
      /^\$\{GRAFANA_ADMIN_PASSWORD:\?[^}]+\}$/,
    );
    expect(grafana.volumes).toEqual(
      expect.arrayContaining([
        './grafana/provisioning:/etc/grafana/provisioning:ro',
        './grafana/dashboards:/etc/grafana/dashboards:ro',
      ]),
    );
    const datasources = parse(
      readFileSync(join(ROOT, 'docker/grafana/provisioning/datasources/prometheus.yml'), 'utf8'),
    ) as { datasources: { uid: string; type: string; url: string }[] };
    expect(datasources.datasources).toEqual([
      expect.objectContaining({
        uid: 'prometheus',
        type: 'prometheus',
        url: 'http://prometheus:9090',
      }),
    ]);
    const providers = parse(
      readFileSync(join(ROOT, 'docker/grafana/provisioning/dashboards/store-orders.yml'), 'utf8'),
    ) as { providers: { options: { path: string } }[] };
    expect(providers.providers[0].options.path).toBe('/etc/grafana/dashboards');
    const dashboard = JSON.parse(
      readFileSync(join(ROOT, 'docker/grafana/dashboards/store-orders.json'), 'utf8'),
    ) as { panels: { datasource: { uid: string } }[] };
    expect(dashboard.panels.length).toBeGreaterThan(0);
    for (const panel of dashboard.panels) expect(panel.datasource.uid).toBe('prometheus');
  });

  it('builds in stages and runs `node dist/main.js` as PID 1, as a non-root user, with production deps', () => {
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(finalStage).toMatch(/^RUN npm ci --omit=dev/m);
    expect(finalStage).toMatch(/^USER (?!root\b)\w+/m);
    expect(finalStage).toMatch(/^HEALTHCHECK /m);
    expect(START_COMMAND).toEqual(['node', 'dist/main.js']);
    expect(MIGRATE_COMMAND).toEqual(['node', 'dist/database/migrate.js']);
  });
});

/** Whether new connections are refused within 20 s (the listener closes just after its log line). */
async function refusedSoon(url: string): Promise<boolean> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
    const error = await httpRequest(url, { timeoutMs: 5_000 }).then(
      () => undefined,
      (e: unknown) => e as { code?: string },
    );
    if (error?.code === 'ECONNREFUSED') return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describeWithBinary('redis-server', 'redis-server')('the image start command', () => {
  let databaseUrl: string;
  let redis: RedisServer;
  let db: Pool;
  const migrations: string[] = [];

  /** The compose app1 environment, pointed at this run's PostgreSQL and Redis. */
  const appEnv = (overrides: Record<string, string> = {}): Record<string, string> => ({
    ...interpolate(compose.services.app1.environment ?? {}),
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    PORT: '0',
    METRICS_PORT: '0',
    ...overrides,
  });

  beforeAll(async () => {
    await buildOnce();
    // An empty database, as a fresh deployment has: the migration service creates the schema.
    const templateUrl = process.env[ENV.url] ?? '';
    const name = `deploy_${Date.now()}`;
    await withClient(templateUrl.replace(/[^/]+$/, 'postgres'), (c) =>
      c.query(`CREATE DATABASE ${name}`),
    );
    databaseUrl = templateUrl.replace(/[^/]+$/, name);
    const [file, ...args] = MIGRATE_COMMAND;
    for (let run = 0; run < 2; run++) {
      const { stdout } = await promisify(execFile)(file, args, {
        cwd: ROOT,
        env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl },
        timeout: 60_000,
      });
      migrations.push(stdout);
    }
    redis = await RedisServer.start();
    db = new Pool({ connectionString: databaseUrl, max: 2 });
  }, 240_000);

  afterAll(async () => {
    await db.end();
    await redis.stop();
  });

  it('migrates an empty database with the migrate service command, and a second run is a no-op', () => {
    expect(migrations[0]).toMatch(/^Applied \d+ migration/);
    expect(migrations[1]).toMatch(/^Up to date/);
  });

  describe('serving, then SIGTERM during a 100,000-order list', () => {
    let app: AppProcess;
    let url: string;
    let metricsUrl: string | undefined;

    beforeAll(async () => {
      await db.query(
        `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
         SELECT g, g % 1000, 1, now(), false, 'pending' FROM generate_series(1, 100000) AS g`,
      );
      ({ app, url, metricsUrl } = await AppProcess.start(
        START_COMMAND,
        appEnv({ SHUTDOWN_DRAIN_DELAY_MS: '5000', SHUTDOWN_TIMEOUT_MS: '60000' }),
      ));
    }, 60_000);

    afterAll(() => app.stop());

    it('is live and ready with the database and Redis up; the Docker HEALTHCHECK passes', async () => {
      expect((await httpRequest(`${url}/health/live`)).status).toBe(200);
      const ready = await httpRequest(`${url}/health/ready`);
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.body)).toMatchObject({
        status: 'ok',
        details: { database: { status: 'up' }, redis: { status: 'up' } },
      });
      const [file, ...args] = instruction('HEALTHCHECK');
      await expect(
        promisify(execFile)(file, args, {
          env: { PATH: process.env.PATH, PORT: new URL(url).port },
          timeout: 10_000,
        }),
      ).resolves.toBeDefined();
      expect(metricsUrl).toBeDefined();
    });

    it('logs one JSON line per request: method, route, status, latency, request id, key id; never the key', async () => {
      const auth = await bearerFor(databaseUrl);
      const headers = {
        Authorization: 'Bearer sk_test_NeverLogThisSecret0123456789',
        ...auth,
        'X-Request-Id': 'deploy-log-check-1',
      };
      const secret = headers.Authorization.replace(/^Bearer /, '');
      const res = await httpRequest(`${url}/v1/store/orders/99999999`, {
        method: 'DELETE',
        headers,
      });
      expect(res.headers['x-request-id']).toBe('deploy-log-check-1');
      await app.waitFor(/"id":"deploy-log-check-1".*request completed/);
      const lines = app
        .json()
        .filter((l) => (l.req as { id?: string } | undefined)?.id === 'deploy-log-check-1');
      const completed = lines.filter((l) => l.msg === 'request completed');
      expect(completed).toHaveLength(1);
      expect(completed[0]).toMatchObject({
        req: { id: 'deploy-log-check-1', method: 'DELETE' },
        res: { statusCode: res.status },
        route: '/v1/store/orders/:orderId',
        responseTime: expect.any(Number),
      });
      if (auth.Authorization) expect(completed[0].keyId).toEqual(expect.any(String));
      expect(app.output()).not.toContain(secret);
    });

    it('turns readiness to 503, stops accepting, completes the list whole, then exits 0', async () => {
      const headers = await bearerFor(databaseUrl);
      const list = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(`${url}/v1/store/orders`, { headers, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.once('data', (first: Buffer) => {
            chunks.push(first);
            // Hold the response mid-stream (back-pressure) while the process is told to stop.
            res.pause();
            app.kill('SIGTERM');
            void app.waitFor(/Closing the listener/).then(() => {
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.resume();
            });
          });
          res.on('error', reject);
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
          });
        });
        req.on('error', reject);
        req.end();
      });

      // During the drain delay the listener still accepts, and readiness says no.
      await app.waitFor(/readiness is now 503/);
      const ready = await httpRequest(`${url}/health/ready`);
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.body)).toEqual({
        code: 'SERVICE_UNAVAILABLE',
        message: expect.stringMatching(/shutting down/),
        status: 503,
      });
      expect(ready.headers['retry-after']).toBe('5');

      // Then it stops accepting new connections while the held list is still in flight.
      await app.waitFor(/Closing the listener/);
      expect(await refusedSoon(`${url}/health/live`)).toBe(true);

      const { status, body } = await list;
      expect(status).toBe(200);
      const orders = JSON.parse(body) as { id: number }[];
      expect(orders).toHaveLength(100_000);
      expect(orders[0].id).toBe(1);
      expect(orders[99_999].id).toBe(100_000);

      // Exit 0 means the deadline (SHUTDOWN_TIMEOUT_MS) did not fire: it exits 1 then.
      expect(await app.exited).toEqual({ code: 0, signal: null });
      expect(app.find(/Shutdown complete/)).toBeDefined();
    }, 90_000);
  });

  it('loses no log line at SIGTERM: each request answered before it has its line, then the exit', async () => {
    // The log is buffered (written in blocks of a few KB, asynchronously): whatever it holds when
    // the signal comes must still be written before the process ends.
    const { app, url } = await AppProcess.start(
      START_COMMAND,
      appEnv({ SHUTDOWN_DRAIN_DELAY_MS: '0', LOG_LEVEL: 'info' }),
    );
    try {
      const auth = await bearerFor(databaseUrl);
      const ids = Array.from({ length: 300 }, (_, i) => `sigterm-flush-${i}`);
      for (let i = 0; i < ids.length; i += 10) {
        await Promise.all(
          ids.slice(i, i + 10).map((id) =>
            httpRequest(`${url}/v1/store/orders/99999999`, {
              method: 'DELETE',
              headers: { ...auth, 'X-Request-Id': id },
            }),
          ),
        );
      }
      app.kill('SIGTERM');
      expect(await app.exited).toEqual({ code: 0, signal: null });
      // The last line written: once it has been read, every line before it has been too.
      await app.waitFor(/Shutdown complete/);
      const logged = new Set(
        app
          .json()
          .filter((l) => l.msg === 'request completed')
          .map((l) => (l.req as { id?: string }).id),
      );
      expect(ids.filter((id) => !logged.has(id))).toEqual([]);
      expect(app.lines[app.lines.length - 1]).toMatch(/Shutdown complete/);
    } finally {
      await app.stop();
    }
  }, 60_000);

  it('ends a shutdown that hangs at SHUTDOWN_TIMEOUT_MS, with exit code 1 and a log line', async () => {
    const copyUrl = await createTestDatabase();
    const { app, url } = await AppProcess.start(
      START_COMMAND,
      appEnv({
        DATABASE_URL: copyUrl,
        SHUTDOWN_DRAIN_DELAY_MS: '0',
        SHUTDOWN_TIMEOUT_MS: '3000',
        DATABASE_STATEMENT_TIMEOUT_MS: '120000',
      }),
    );
    const locker = new Pool({ connectionString: copyUrl, max: 1 });
    const lock = await locker.connect();
    try {
      // A list that cannot finish: the table is locked by another transaction.
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
      const hung = httpRequest(`${url}/v1/store/orders`, {
        headers: await bearerFor(copyUrl),
        timeoutMs: 60_000,
      }).catch((error: unknown) => error);
      for (;;) {
        const { rows } = await lock.query<{ waiting: string }>(
          `SELECT count(*) AS waiting FROM pg_locks WHERE NOT granted AND relation = 'orders'::regclass`,
        );
        if (rows[0].waiting !== '0') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      app.kill('SIGTERM');
      expect(await app.exited).toEqual({ code: 1, signal: null });
      expect(app.find(/Shutdown did not finish within 3000 ms/)).toBeDefined();
      await hung;
    } finally {
      await lock.query('ROLLBACK');
      lock.release();
      await locker.end();
      await app.stop();
    }
  }, 60_000);
});
