/**
 * A share of the connection pool: at most `size` tasks of one kind hold a connection at once;
 * the others wait their turn here, first come first served, without a deadline (each task ahead
 * is one statement, bounded by the statement timeout). So that kind of work, however much of it
 * there is, never takes the connections the rest of the requests need, nor crowds the pool's own
 * queue (whose wait is bounded: a request that waits too long there is answered 503).
 */
export class PoolShare {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`a share of ${size} connections`);
  }

  /** The share of a pool of `poolSize` that a kind of work may take: half of it, at least one. */
  static halfOf(poolSize: number): PoolShare {
    return new PoolShare(Math.max(1, Math.floor(poolSize / 2)));
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.size) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      // The slot goes straight to the next in line, if any.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
