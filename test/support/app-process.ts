import { ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * The service run as the container runs it (`node dist/main.js`, from a fresh `npm run build`),
 * with PORT=0 and METRICS_PORT=0: the ports it picked are read from its own log lines. Keeps every
 * log line (JSON) for assertions.
 */
export class AppProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<Exit>;
  private readonly waiters: { test: (line: string) => boolean; resolve: () => void }[] = [];
  private readonly readers: ReturnType<typeof createInterface>[] = [];

  private constructor(
    private readonly child: ChildProcess,
    readonly command: readonly string[],
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      const reader = createInterface({ input: stream });
      this.readers.push(reader);
      reader.on('line', (line) => {
        this.lines.push(line);
        for (const waiter of [...this.waiters]) {
          if (waiter.test(line)) {
            this.waiters.splice(this.waiters.indexOf(waiter), 1);
            waiter.resolve();
          }
        }
      });
    }
  }

  /**
   * Starts `command` (e.g. the Dockerfile's CMD) in the repository root (or in `cwd`), waits until
   * it listens.
   */
  static async start(
    command: readonly string[],
    env: Record<string, string>,
    cwd = `${__dirname}/../..`,
  ): Promise<{ app: AppProcess; url: string; metricsUrl?: string }> {
    const app = await AppProcess.spawned(command, env, cwd, /listening on/, 'listening');
    const port = /:(\d+)\/v1/.exec(app.find(/listening on/) ?? '')?.[1];
    const metricsPort = /metrics on port (\d+)/.exec(app.find(/metrics on port/) ?? '')?.[1];
    return {
      app,
      url: `http://127.0.0.1:${port ?? '?'}`,
      metricsUrl: metricsPort ? `http://127.0.0.1:${metricsPort}` : undefined,
    };
  }

  /**
   * Starts the service as a worker only (`SERVICE_ROLES=worker`: no HTTP listener), waits until
   * its relay and consumers started.
   */
  static async startWorker(
    command: readonly string[],
    env: Record<string, string>,
    cwd = `${__dirname}/../..`,
  ): Promise<AppProcess> {
    return await AppProcess.spawned(
      command,
      { ...env, SERVICE_ROLES: 'worker' },
      cwd,
      /started as a worker only/,
      'started',
    );
  }

  private static async spawned(
    command: readonly string[],
    env: Record<string, string>,
    cwd: string,
    ready: RegExp,
    readyName: string,
  ): Promise<AppProcess> {
    const [file, ...args] = command;
    const child = spawn(file, args, {
      cwd,
      env: { PATH: process.env.PATH ?? '', PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const app = new AppProcess(child, command);
    const exitedEarly = app.exited.then((exit) => {
      throw new Error(`exited before ${readyName} (${JSON.stringify(exit)}):\n${app.output()}`);
    });
    await Promise.race([app.waitFor(ready), exitedEarly]);
    return app;
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('not started');
    return this.child.pid;
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Resolves at the first log line (already seen or coming) that matches. */
  waitFor(pattern: RegExp): Promise<void> {
    if (this.find(pattern) !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ test: (l) => pattern.test(l), resolve }));
  }

  find(pattern: RegExp): string | undefined {
    return this.lines.find((line) => pattern.test(line));
  }

  /** Log lines parsed as JSON (pino); others are skipped. */
  json(): Record<string, unknown>[] {
    return this.lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  output(): string {
    return this.lines.join('\n');
  }

  /**
   * From now on, its output is read and dropped, neither split into lines nor kept: for a load
   * test, whose client must not spend its time and memory on one server's log and not another's
   * (a container's log goes to its runtime, not to the client).
   */
  discardOutput(): void {
    for (const reader of this.readers.splice(0)) reader.close();
    for (const stream of [this.child.stdout, this.child.stderr]) stream?.resume();
  }

  /** Ends it whatever state it is in (SIGKILL), for afterAll. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}
