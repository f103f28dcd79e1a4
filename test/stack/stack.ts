/**
 * The compose stack (docker/docker-compose.yml) run with `docker` commands, for the stack test and
 * the soak: Debian's docker-compose (1.29) cannot read the file, and no bridge network is used.
 * Every container is on the host's network, each service on a loopback address of its own, under
 * the name the repository's files use for it (`--add-host`), so that nginx.conf, prometheus.yml and
 * the compose file's environment are used as they are. The images: the repository's Dockerfile,
 * built on node:24-bookworm-slim, and the services' stand-ins from docker/stand-in-images.sh.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { displayPrefix, generateApiKey, hashApiKey } from '../../src/auth/api-key';
import { withClient } from '../setup/clusters';
import { httpRequest } from '../support/http';

export const ROOT = join(__dirname, '../..');
const execFileAsync = promisify(execFile);

/** Each service's loopback address; the ports are those of the repository's files. */
export const ADDRESS = {
  app1: '127.0.0.11',
  app2: '127.0.0.12',
  worker: '127.0.0.13',
  postgres: '127.0.0.20',
  redis: '127.0.0.21',
  prometheus: '127.0.0.30',
} as const;
export type Instance = 'app1' | 'app2';
export const INSTANCES: Instance[] = ['app1', 'app2'];
/** nginx.conf's `listen 80`. */
export const LB = 'http://127.0.0.1:80';
export const PROMETHEUS = `http://${ADDRESS.prometheus}:9090`;
export const APP_IMAGE = 'store-orders-service:local';
const STAND_IN = 'store-orders-stand-in';
const LABEL = 'store-orders-stack';
const PREFIX = 'store-orders-stack-';
const HOSTS = Object.entries(ADDRESS).map(([name, address]) => `--add-host=${name}:${address}`);

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  stop_grace_period?: string;
}
const compose = parse(readFileSync(join(ROOT, 'docker/docker-compose.yml'), 'utf8'), {
  merge: true,
}) as { services: Record<string, ComposeService> };

/** nginx.conf's `fail_timeout` of the instances. */
export const NGINX_FAIL_TIMEOUT_MS =
  Number(
    /fail_timeout=(\d+)s/.exec(readFileSync(join(ROOT, 'docker/nginx.conf'), 'utf8'))?.[1] ?? 10,
  ) * 1000;

/**
 * The answers a replaced instance gives under load, beside the others, before the next one is
 * stopped: its first requests are slower (code not yet optimised, its connections' first
 * statements), and it should not take every request while it is still that new.
 */
const WARM_UP_ANSWERS = 200;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function log(message: string): void {
  process.stdout.write(`[stack ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

export async function docker(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('docker', args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/** Runs a command with its output passed through (image builds), failing on a non-zero exit. */
function passThrough(file: string, args: string[], input?: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: ROOT,
      stdio: [input ? 'pipe' : 'ignore', 'inherit', 'inherit'],
    });
    if (input && child.stdin) input.pipe(child.stdin);
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')}: exit ${code}`)),
    );
  });
}

/**
 * The build context as a tar stream: the directory `from` (the repository unless told) without
 * what Dockerfile.dockerignore names. Debian's engine has no BuildKit builder, and the legacy
 * one reads only a root .dockerignore.
 */
function buildContext(from = ROOT): NodeJS.ReadableStream {
  const ignored = readFileSync(join(ROOT, 'docker/Dockerfile.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => `--exclude=${l.replace(/^\*\*\//, '')}`);
  const tar = spawn('tar', ['-c', ...ignored, '.'], {
    cwd: from,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return tar.stdout;
}

/** The service's image from docker/Dockerfile as it is, built from the directory `from`. */
export async function buildImage(tag: string, from = ROOT): Promise<void> {
  await passThrough(
    'docker',
    ['build', '--network', 'host', '-q', '-f', 'docker/Dockerfile', '-t', tag, '-'],
    buildContext(from),
  );
}

/** Copies the build context of the repository into `to` (an empty directory). */
export async function copyBuildContext(to: string): Promise<void> {
  await passThrough('tar', ['-x', '-C', to], buildContext());
}

/** The stand-in base images when missing, then the service's image of this repository. */
export async function buildImages(): Promise<void> {
  await passThrough('docker/stand-in-images.sh', []);
  await buildImage(APP_IMAGE);
}

/** `${NAME:?message}` and `${NAME:-default}` as compose substitutes them, `$$` as `$`. */
function interpolate(value: string, vars: Record<string, string | undefined>): string {
  return value
    .replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, name: string, op?: string, rest?: string) => {
      const set = vars[name];
      if (set !== undefined && set !== '') return set;
      if (op === '-') return rest ?? '';
      throw new Error(`${name} is not set${op === '?' ? `: ${rest ?? ''}` : ''}`);
    })
    .replace(/\$\$/g, '$');
}

function serviceEnvironment(name: string, vars: Record<string, string>): string[] {
  const env = compose.services[name].environment ?? {};
  return Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${interpolate(v, vars)}`]);
}

/** What a run adds to the compose file's environment (the stack test's receivers, for one). */
export interface StackOptions {
  /** Added to the environment of the API instances and the worker. */
  env?: Record<string, string>;
  /** Each API instance opens its admin listener on its own address, at this port. */
  adminPort?: number;
}

export interface Keys {
  /** Headers of an enterprise key with limits no run reaches. */
  load: Record<string, string>;
  databaseUrl: string;
}

export class Stack {
  constructor(private readonly options: StackOptions = {}) {}

  /** The compose file's secrets, made up for this run. */
  readonly secrets: Record<string, string> = {
    ...Object.fromEntries(
      ['POSTGRES_PASSWORD', 'STORE_MIGRATE_PASSWORD', 'STORE_APP_PASSWORD', 'REDIS_PASSWORD'].map(
        (name) => [name, randomBytes(12).toString('hex')],
      ),
    ),
    WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
  };

  /** PostgreSQL as the migration role, from this host. */
  get migrateUrl(): string {
    return `postgres://store_migrate:${this.secrets.STORE_MIGRATE_PASSWORD}@${ADDRESS.postgres}:5432/store_orders`;
  }

  /** Removes every container a run left, running or not. */
  static async removeAll(): Promise<void> {
    const ids = (await docker('ps', '-aq', '--filter', `label=${LABEL}`))
      .split('\n')
      .filter(Boolean);
    if (ids.length > 0) await docker('rm', '-f', '-v', ...ids);
  }

  private runArgs(name: string): string[] {
    return ['run', '-d', '--name', PREFIX + name, '--label', LABEL, '--network', 'host', ...HOSTS];
  }

  async startDatabaseAndRedis(): Promise<void> {
    await docker(
      ...this.runArgs('postgres'),
      ...serviceEnvironment('postgres', this.secrets),
      // Its data in memory, owned by the image's postgres user (999): on this one machine it
      // stands in for a database on a host of its own, whose disk the images built and the
      // containers started beside it do not share.
      '--tmpfs',
      '/var/lib/postgresql:uid=999,gid=999,mode=0700',
      '-v',
      `${join(ROOT, 'docker/postgres/initdb.d')}:/docker-entrypoint-initdb.d:ro`,
      `${STAND_IN}/postgres:18`,
      'postgres',
      '-c',
      `listen_addresses=${ADDRESS.postgres}`,
    );
    // The compose file's own command, bound to its address.
    const [shell, flag, line] = compose.services.redis.command ?? [];
    await docker(
      ...this.runArgs('redis'),
      ...serviceEnvironment('redis', this.secrets),
      `${STAND_IN}/redis:bookworm`,
      shell,
      flag,
      `${interpolate(line, this.secrets)} --bind ${ADDRESS.redis}`,
    );
    // The entrypoint's first server listens on its socket only: a TCP answer is the real one.
    await until('PostgreSQL accepts store_migrate', 60_000, () =>
      withClient(this.migrateUrl, () => Promise.resolve(true)).catch(() => false),
    );
  }

  /** The compose `migrate` service: the image's migration command, as store_migrate. */
  async migrate(image = APP_IMAGE): Promise<string> {
    const command = compose.services.migrate.command ?? [];
    return docker(
      'run',
      '--rm',
      '--label',
      LABEL,
      '--network',
      'host',
      ...HOSTS,
      ...serviceEnvironment('migrate', this.secrets),
      image,
      ...command,
    );
  }

  /**
   * An instance as compose runs it, with the compose environment, on its own loopback address
   * (HOST). The image's HEALTHCHECK probes 127.0.0.1, where this instance does not listen: off.
   * `container` names another container of the same service (a second worker); `image` another
   * release's image.
   */
  async startInstance(
    name: Instance | 'worker',
    { container = name, image = APP_IMAGE }: { container?: string; image?: string } = {},
  ): Promise<void> {
    const grace = Number.parseInt(compose.services[name].stop_grace_period ?? '30', 10);
    const { env = {}, adminPort } = this.options;
    const admin =
      adminPort === undefined || name === 'worker'
        ? {}
        : { ADMIN_PORT: String(adminPort), ADMIN_HOST: ADDRESS[name] };
    await docker(
      ...this.runArgs(container),
      ...serviceEnvironment(name, this.secrets),
      ...Object.entries({ ...env, ...admin }).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      '-e',
      `HOST=${ADDRESS[name]}`,
      '--no-healthcheck',
      `--stop-timeout=${grace}`,
      image,
    );
  }

  /** The worker (relay, consumers, webhook attempts) serves no HTTP: its metrics say it is up. */
  async waitWorkerUp(): Promise<number> {
    return await until('worker up', 60_000, async () =>
      httpRequest(`http://${ADDRESS.worker}:9464/metrics`, { timeoutMs: 2_000 }).then(
        (r) => r.status === 200,
        () => false,
      ),
    );
  }

  async startFront(): Promise<void> {
    await docker(
      ...this.runArgs('lb'),
      '-v',
      `${join(ROOT, 'docker/nginx.conf')}:/etc/nginx/nginx.conf:ro`,
      `${STAND_IN}/nginx:bookworm`,
    );
    await docker(
      ...this.runArgs('prometheus'),
      '-v',
      `${join(ROOT, 'docker/prometheus')}:/etc/prometheus:ro`,
      `${STAND_IN}/prometheus:bookworm`,
      ...(compose.services.prometheus.command ?? []),
      `--web.listen-address=${ADDRESS.prometheus}:9090`,
    );
    await until('nginx answers', 30_000, async () =>
      httpRequest(`${LB}/health/live`, { timeoutMs: 2_000 }).then(
        (r) => r.status === 200,
        () => false,
      ),
    );
  }

  async waitReady(name: Instance, timeoutMs = 60_000): Promise<void> {
    await until(`${name} ready`, timeoutMs, async () =>
      httpRequest(`http://${ADDRESS[name]}:3000/health/ready`, { timeoutMs: 2_000 }).then(
        (r) => r.status === 200,
        () => false,
      ),
    );
  }

  /** The whole stack, with `orders` orders, an enterprise key for the load. */
  async start(orders: number): Promise<Keys> {
    await Stack.removeAll();
    await this.startDatabaseAndRedis();
    log(`migrate: ${(await this.migrate()).split('\n').pop() ?? ''}`);
    await this.seedOrders(orders);
    await Promise.all(INSTANCES.map((name) => this.startInstance(name)));
    await Promise.all(INSTANCES.map((name) => this.waitReady(name)));
    await this.startInstance('worker');
    await this.waitWorkerUp();
    await this.startFront();
    return { load: await this.issueKey('enterprise'), databaseUrl: this.migrateUrl };
  }

  async seedOrders(count: number): Promise<void> {
    await withClient(this.migrateUrl, async (c) => {
      await c.query(
        `INSERT INTO orders (pet_id, quantity, ship_date, complete, status)
         SELECT g % 1000, 1 + g % 5, timestamptz '2026-01-01' + g * interval '1 minute', g % 3 = 0,
                (ARRAY['pending', 'shipped', 'cancelled'])[1 + g % 3]
         FROM generate_series(1, $1::int) AS g`,
        [count],
      );
      await c.query('ANALYZE orders');
    });
  }

  /**
   * A new key of `plan`, stored as the service stores keys; without `scopes` it has every scope
   * but the admin ones.
   */
  async issueKey(
    plan: 'free' | 'enterprise',
    scopes: string[] | null = null,
  ): Promise<Record<string, string>> {
    const key = generateApiKey();
    const limits = plan === 'enterprise' ? [1_000_000_000, 2_000_000_000] : [null, null];
    await withClient(this.migrateUrl, (c) =>
      c.query(
        `INSERT INTO api_keys (name, prefix, key_hash, plan, per_minute, per_day, scopes)
         VALUES ('stack', $1, $2, $3, $4, $5, $6)`,
        [displayPrefix(key), hashApiKey(key), plan, ...limits, scopes],
      ),
    );
    return { Authorization: `Bearer ${key}` };
  }

  private replaced = 0;

  container(name: string): string {
    return PREFIX + name;
  }

  async logs(name: string): Promise<string> {
    const { stdout, stderr } = await execFileAsync('docker', ['logs', this.container(name)], {
      maxBuffer: 256 * 1024 * 1024,
    });
    return stdout + stderr;
  }

  /**
   * Ready, and back in nginx's rotation: nginx skips an instance it failed to reach (while it was
   * stopped) for `fail_timeout` after the last failure, so stopping the other one sooner leaves
   * nginx no instance to send to (502).
   */
  async waitInRotation(name: Instance): Promise<void> {
    await this.waitReady(name);
    await this.waitServedThroughNginx(name);
  }

  /**
   * Until nginx's access log shows `name` answering `answers` requests nginx sent it after now
   * (the load's, or the liveness probes sent through nginx here meanwhile): nginx gives no other
   * sign that an instance is back in its rotation. Its workers share the upstreams' state (the
   * `zone`), so one answer means every worker sends to it again. The log is followed from its
   * end by one `docker logs` for the whole wait: reading it again from the start at each probe
   * (the whole stack test's requests) would cost dockerd most of a core, on the machine whose
   * latencies the rollout measures.
   */
  async waitServedThroughNginx(name: Instance, answers = 1): Promise<void> {
    const upstream = `${ADDRESS[name]}:3000`;
    const what = answers === 1 ? 'answering' : `${answers} answers`;
    const follower = spawn('docker', ['logs', '--follow', '--tail', '0', this.container('lb')], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let answered = 0;
    createInterface({ input: follower.stdout }).on('line', (line) => {
      // A request nginx retried lists every instance it tried: the last one answered.
      const tried = /"upstream":"([^"]*)","upstream_status":"([^"]*)"/.exec(line);
      const last = (list: string): string => list.split(', ').pop() ?? '';
      if (tried !== null && last(tried[1]) === upstream && Number(last(tried[2])) < 500) {
        answered += 1;
      }
    });
    try {
      await until(`${name} ${what} through nginx`, NGINX_FAIL_TIMEOUT_MS + 30_000, async () => {
        await httpRequest(`${LB}/health/live`, { timeoutMs: 2_000 }).catch(() => undefined);
        return answered >= answers;
      });
    } finally {
      follower.kill();
    }
  }

  /** `docker stop` (SIGTERM, then the compose grace period) and start again, then in rotation. */
  async restart(name: Instance): Promise<void> {
    await docker('stop', this.container(name));
    await docker('start', this.container(name));
    await this.waitInRotation(name);
  }

  /**
   * The container of `name` replaced by one of `image` (a release rolled out or back): stopped
   * as `docker stop` does (drained), put aside, started from `image` with the same settings, and
   * waited for: an instance until it has served its warm-up under the load, beside the others
   * (`WARM_UP_ANSWERS` through nginx), before the next is stopped. `mark` is told as each of these
   * begins (`app1 stop`, `app1 start`, `app1 ready`), to tell the load's answers apart.
   */
  async replace(
    name: Instance | 'worker',
    image: string,
    mark: (what: string) => void = () => undefined,
  ): Promise<void> {
    mark(`${name} stop`);
    await docker('stop', this.container(name));
    // Kept, stopped, under another name until the stack is removed: its logs may tell a failure.
    await docker('rename', this.container(name), `${this.container(name)}-${++this.replaced}`);
    mark(`${name} start`);
    await this.startInstance(name, { image });
    if (name === 'worker') {
      await this.waitWorkerUp();
      return;
    }
    await this.waitReady(name);
    mark(`${name} ready`);
    await this.waitServedThroughNginx(name, WARM_UP_ANSWERS);
  }

  /**
   * nginx's access-log lines of the answers 5xx since `since`, each followed by the lines any
   * service container (replaced ones included) logged with its request id: why requests failed.
   */
  async serverErrorsSince(since: Date): Promise<string[]> {
    const from = since.toISOString().slice(0, 19);
    const failed = (await this.logs('lb')).split('\n').filter((line) => {
      const match = /^\{"time":"([^"+]+)[^"]*".*"status":(\d+),/.exec(line);
      return match !== null && match[1] >= from && Number(match[2]) >= 500;
    });
    const names = (await docker('ps', '-a', '--filter', `label=${LABEL}`, '--format', '{{.Names}}'))
      .split('\n')
      .filter((n) => n !== this.container('lb'));
    const logs = await Promise.all(names.map((n) => this.logs(n.slice(PREFIX.length))));
    return failed.flatMap((line) => {
      const id = /"request_id":"([^"]+)"/.exec(line)?.[1];
      const told = id ? logs.flatMap((l) => l.split('\n').filter((l2) => l2.includes(id))) : [];
      return [line, ...told];
    });
  }

  /** The resident memory of an instance's process, from its own metrics (bytes). */
  async rss(name: Instance): Promise<number | undefined> {
    const res = await httpRequest(`http://${ADDRESS[name]}:9464/metrics`, {
      timeoutMs: 5_000,
    }).catch(() => undefined);
    const line = res?.body.split('\n').find((l) => l.startsWith('process_resident_memory_bytes '));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  }

  async stop(): Promise<void> {
    await Stack.removeAll();
  }
}

/** Polls `check` every 250 ms until it is true; throws after `timeoutMs`. */
export async function until(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(250);
  }
}
