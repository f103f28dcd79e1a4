import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from '../setup/clusters';

interface QueryAnswer {
  status: 'success' | 'error';
  error?: string;
  data?: { resultType: string; result: unknown[] };
}

/**
 * A real Prometheus (Debian's `prometheus` package) on a free loopback port, with its own
 * throwaway storage directory, for as long as a suite needs it. `config` is written as its
 * prometheus.yml (paths in it must be absolute).
 */
export class PrometheusServer {
  private readonly output: string[] = [];

  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly url: string,
  ) {
    for (const stream of [child.stdout, child.stderr]) {
      stream?.on('data', (chunk: Buffer) => this.output.push(chunk.toString('utf8')));
    }
  }

  static async start(config: object): Promise<PrometheusServer> {
    const dir = mkdtempSync(join(tmpdir(), 'store-orders-prometheus-'));
    writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
    const port = await freePort();
    const child = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const server = new PrometheusServer(child, dir, `http://127.0.0.1:${port}`);
    // Even if the test process ends without afterAll (a crash, a killed worker).
    const killOnExit = (): void => void child.kill('SIGKILL');
    process.once('exit', killOnExit);
    child.once('exit', () => process.removeListener('exit', killOnExit));
    try {
      for (const deadline = Date.now() + 30_000; ;) {
        if (child.exitCode !== null) throw new Error(`prometheus exited: ${server.log()}`);
        const ready = await fetch(`${server.url}/-/ready`).then(
          (r) => r.ok,
          () => false,
        );
        if (ready) break;
        if (Date.now() > deadline) throw new Error(`prometheus not ready in 30 s: ${server.log()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  /** An instant query through the HTTP API: Prometheus' answer, errors included. */
  async query(expr: string): Promise<QueryAnswer> {
    const res = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (await res.json()) as QueryAnswer;
  }

  /** A range query (`step` in seconds) over the last `seconds`. */
  async queryRange(expr: string, seconds: number, step: number): Promise<QueryAnswer> {
    const end = Date.now() / 1000;
    const params = new URLSearchParams({
      query: expr,
      start: String(end - seconds),
      end: String(end),
      step: String(step),
    });
    const res = await fetch(`${this.url}/api/v1/query_range?${params.toString()}`);
    return (await res.json()) as QueryAnswer;
  }

  async get<T>(path: string): Promise<T> {
    const res = await fetch(`${this.url}${path}`);
    return (await res.json()) as T;
  }

  log(): string {
    return this.output.join('').slice(-4000);
  }

  /** Stops it (SIGTERM, then SIGKILL after 10 s) and removes its storage. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
