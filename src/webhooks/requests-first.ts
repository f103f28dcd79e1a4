import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** How a delivering instance gives way to the requests it serves. */
export interface RequestsFirstOptions {
  /**
   * Share of the event loop's time, over the last sample, above which the loop counts as busy,
   * when it answered requests in that time.
   */
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

/**
 * Requests before deliveries. Deliveries share the instance (and often the machine, with its
 * database) with the API; a delivery may wait seconds, a request may not. While the event loop is
 * busy and answering requests, a worker waits before its next batch until the loop has room
 * again, or at most `longestWaitMs`, so a saturated instance still delivers, slowly, and catches
 * up when the load falls. An instance that answers no requests (a dedicated delivery process, or
 * an API with no traffic) never waits, however busy its deliveries keep it.
 */
export class RequestsFirst {
  private busy = false;
  private timer: NodeJS.Timeout | undefined;

  /** `answered`: how many requests the instance has answered so far. */
  constructor(
    private readonly answered: () => number,
    private readonly options: RequestsFirstOptions = REQUESTS_FIRST,
  ) {}

  start(): void {
    let last = performance.eventLoopUtilization();
    let answeredBefore = this.answered();
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      const answered = this.answered();
      this.busy =
        answered > answeredBefore &&
        performance.eventLoopUtilization(now, last).utilization > this.options.busyShare;
      last = now;
      answeredBefore = answered;
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
