import type { OnApplicationShutdown } from '@nestjs/common';
import { performance } from 'node:perf_hooks';

/** The most recent ticks a reading is made of, at least (10 s at the default resolution). */
const KEPT_TICKS = 1_000;

/** How late the event loop has been, in ms, since the last call. */
export type LoopDelayReading = () => number;

/**
 * The event loop's delay by timer lag: a timer due every `resolutionMs` notes how late it ran.
 * A request that arrives while the loop is behind waits that long, unread in its socket, before
 * anything can refuse it; a loop busy nearly all of the time but coming round in time keeps its
 * lag small. {@link read} gives the median lag of the ticks since its last call, so that one
 * pause (a garbage collection, the process briefly off its core) does not count as a queue; a
 * loop that has not come round at all since then reads as late as it is now.
 */
export class LoopDelay implements OnApplicationShutdown {
  private readonly timer: NodeJS.Timeout;
  private lastTick: number;
  private lags: number[] = [];

  constructor(
    private readonly resolutionMs = 10,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.lastTick = now();
    this.timer = setInterval(() => {
      this.tick();
    }, resolutionMs);
    this.timer.unref();
  }

  /** One tick of the timer (called by it; tests call it with their own clock). */
  tick(): void {
    const now = this.now();
    // Read once a window of answers: an idle instance reads nothing, so only the latest are kept.
    if (this.lags.length >= 2 * KEPT_TICKS) this.lags = this.lags.slice(-KEPT_TICKS);
    this.lags.push(Math.max(0, now - this.lastTick - this.resolutionMs));
    this.lastTick = now;
  }

  /** The median lag, in ms, of the ticks since the last call. */
  readonly read: LoopDelayReading = () => {
    const lags = this.lags;
    this.lags = [];
    if (lags.length === 0) return Math.max(0, this.now() - this.lastTick - this.resolutionMs);
    lags.sort((a, b) => a - b);
    return lags[Math.floor((lags.length - 1) / 2)];
  };

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }
}
