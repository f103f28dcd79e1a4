import { ChildProcess, spawn } from 'node:child_process';
import Redis from 'ioredis';
import { freePort } from '../setup/clusters';

/** A real, throwaway redis-server on a free loopback port (no persistence). */
export class RedisServer {
  private process?: ChildProcess;

  private constructor(
    readonly port: number,
    private readonly extraArgs: readonly string[],
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** `extraArgs`: more of redis-server's options, e.g. `['--maxmemory-policy', 'allkeys-lru']`. */
  static async start(extraArgs: readonly string[] = []): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), extraArgs);
    await server.restart();
    return server;
  }

  /** Starts it again on the same port (after {@link stop}). */
  async restart(): Promise<void> {
    this.process = spawn(
      'redis-server',
      [
        ...['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        ...this.extraArgs,
      ],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      // A new client per attempt: a client that failed to connect refuses a second connect().
      const probe = new Redis(this.url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      probe.on('error', () => undefined); // reported by connect() below
      try {
        await probe.connect();
        await probe.ping();
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 50));
      } finally {
        probe.disconnect();
      }
    }
  }

  async stop(): Promise<void> {
    const child = this.process;
    // Killed (by a signal) it has no exit code: a second stop must not wait for a second exit.
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}
