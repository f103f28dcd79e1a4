import { performance } from 'node:perf_hooks';

/** How a delivering instance gives way to the requests it serves. */
export interface RequestsFirstOptions {
  /** Share of the event loop's time, over the last sample, above which the loop counts as busy. */
  busyShare: number;
  /** How often the loop's use is sampled, in ms. */
  sampleMs: number;
  /** The longest a worker waits for room before it takes its next batch anyway, in ms. */
  longestWaitMs: number;
}

export const REQUESTS_FIRST: RequestsFirstOptions = {
  busyShare: 0.7,
  sampleMs: 250,
  longestWaitMs: 1000,
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Requests before deliveries. Deliveries share the instance (and often the machine, with its
 * database) with the API; a delivery may wait seconds, a request may not. While the event loop is
 * busy, a worker waits before its next batch until the loop has room again, or at most
 * `longestWaitMs`, so a saturated instance still delivers, slowly, and catches up when the load
 * falls. The loop's own measure (its utilisation) counts whatever keeps it busy, the deliveries
 * too: a delivering instance never takes its loop past `busyShare` by itself.
 */
export class RequestsFirst {
  private busy = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RequestsFirstOptions = REQUESTS_FIRST) {}

  start(): void {
    let last = performance.eventLoopUtilization();
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      this.busy = performance.eventLoopUtilization(now, last).utilization > this.options.busyShare;
      last = now;
    }, this.options.sampleMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.busy = false;
  }

  /** Resolves once the loop has room, or after `longestWaitMs`. */
  async room(): Promise<void> {
    const until = Date.now() + this.options.longestWaitMs;
    while (this.busy && Date.now() < until) {
      await sleep(Math.min(this.options.sampleMs, until - Date.now()));
    }
  }
}
