/**
 * The shipped nginx (docker/nginx.conf) run for real, with the instances it proxies to down: one
 * refuses connections, the other closes them before it answers. nginx's error log has a format of
 * its own, which names the request line, the upstream's URL and the Referer in every line about a
 * request; a key a client put in the query string must not reach it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../src/auth/api-key';
import { freePort } from './setup/clusters';
import { httpRequest } from './support/http';
import { describeWithBinary } from './support/system-binary';

const SHIPPED = readFileSync(join(__dirname, '../docker/nginx.conf'), 'utf8');

/** `text` with `pattern` replaced; fails when the shipped file no longer has what it replaces. */
function replaced(text: string, pattern: RegExp, replacement: string): string {
  if (!pattern.test(text)) throw new Error(`docker/nginx.conf has no ${String(pattern)}`);
  return text.replace(pattern, replacement);
}

/**
 * docker/nginx.conf as it runs here: listening on a loopback port, its instances at `upstreams`,
 * its logs and files in `dir`; with `errorLevel`, its error log at that level instead.
 */
function configHere(dir: string, port: number, upstreams: number[], errorLevel?: string): string {
  let conf = replaced(SHIPPED, /listen 80;/, `listen 127.0.0.1:${String(port)};`);
  upstreams.forEach((upstream, i) => {
    conf = replaced(
      conf,
      new RegExp(`server app${String(i + 1)}:\\d+`),
      `server 127.0.0.1:${String(upstream)}`,
    );
  });
  conf = replaced(conf, /\/dev\/stderr/g, join(dir, 'error.log'));
  conf = replaced(conf, /\/dev\/stdout/g, join(dir, 'access.log'));
  if (errorLevel !== undefined) {
    conf = replaced(conf, /(error_log\s+\S+\s+)\w+;/g, `$1${errorLevel};`);
  }
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((name) => `  ${name}_temp_path ${join(dir, name)};\n`)
    .join('');
  conf = replaced(conf, /^http \{\n/m, `http {\n${temp}`);
  return `pid ${join(dir, 'nginx.pid')};\n${conf}`;
}

/** nginx in the foreground on `conf`, in `dir`, once it listens on `port`. */
async function startNginx(dir: string, conf: string, port: number): Promise<ChildProcess> {
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = spawn(
    'nginx',
    ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'start.log'), '-g', 'daemon off;'],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(
        `nginx exited (${String(child.exitCode)}): ${readFileSync(join(dir, 'start.log'), 'utf8')}`,
      );
    }
    // A connection, not a request: a request would meet the instances and put them out of rotation.
    const listening = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(true));
      socket.on('error', () => resolve(false));
      socket.on('connect', () => socket.destroy());
    });
    if (listening) return child;
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error('nginx did not listen within 10 s');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stopNginx(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

describeWithBinary('nginx', 'nginx')('the shipped nginx, its instances down', () => {
  let dir: string;
  /** An instance that takes the request and closes the connection without an answer. */
  let closing: Server;
  let closingPort: number;
  /** A port nothing listens on: connections to it are refused. */
  let refusingPort: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nginx-'));
    closing = createServer((socket) => socket.once('data', () => socket.destroy()));
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    closingPort = (closing.address() as { port: number }).port;
    refusingPort = await freePort();
  });

  afterAll(async () => {
    await new Promise((resolve) => closing.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * nginx on `conf`, sent a key in the query string, the Referer and the path while both instances
   * fail; its error log and access log once it has stopped.
   */
  async function logsOfRequestsWith(
    key: string,
    errorLevel?: string,
  ): Promise<{ errorLog: string; accessLog: string }> {
    const port = await freePort();
    const run = mkdtempSync(join(dir, 'run-'));
    const conf = configHere(run, port, [refusingPort, closingPort], errorLevel);
    const nginx = await startNginx(run, conf, port);
    try {
      const url = `http://127.0.0.1:${String(port)}`;
      const statuses = [];
      // The first meets both instances failing; the next ones, both out of rotation.
      for (let i = 0; i < 2; i++) {
        statuses.push((await httpRequest(`${url}/v1/store/orders?api_key=${key}`)).status);
      }
      statuses.push(
        (
          await httpRequest(`${url}/v1/store/orders/${key.slice(3)}`, {
            method: 'DELETE',
            headers: { Referer: `https://shop.test/?api_key=${key}` },
          })
        ).status,
      );
      expect(statuses).toEqual([502, 502, 502]);
    } finally {
      await stopNginx(nginx);
    }
    return {
      errorLog:
        readFileSync(join(run, 'error.log'), 'utf8') + readFileSync(join(run, 'start.log'), 'utf8'),
      accessLog: readFileSync(join(run, 'access.log'), 'utf8'),
    };
  }

  it('writes no key into its error log (nor its access log) when an instance refuses or closes', async () => {
    const key = generateApiKey();
    const { errorLog, accessLog } = await logsOfRequestsWith(key);
    expect(errorLog).not.toContain(key.slice(3));
    expect(accessLog).not.toContain(key.slice(3));
    // The access log still tells an operator what happened: each request's 502, from both.
    const lines = accessLog
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ method: 'GET', status: 502 });
    expect(String(lines[0].upstream)).toContain(String(refusingPort));
    expect(String(lines[0].upstream)).toContain(String(closingPort));
  });

  it('would have: at `warn`, the same requests write the key there (this test sees a leak)', async () => {
    const key = generateApiKey();
    const { errorLog } = await logsOfRequestsWith(key, 'warn');
    expect(errorLog).toMatch(
      /connect\(\) failed \(111: Connection refused\) while connecting to upstream/,
    );
    expect(errorLog).toMatch(/upstream prematurely closed connection/);
    expect(errorLog).toContain(key.slice(3));
  });
});
