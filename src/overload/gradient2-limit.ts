/** What {@link Gradient2Limit} is made with: bounds and how it reacts. */
export interface Gradient2Options {
  /** The limit it never goes below nor above, and the one it starts from (clamped between). */
  minLimit: number;
  maxLimit: number;
  initialLimit: number;
  /** How much slower than the long-run latency a window may be before the limit shrinks. */
  tolerance: number;
  /** Windows the long-run latency is averaged over (an exponential moving average). */
  longWindow: number;
  /** Weight of each new estimate against the limit so far (0 to 1). */
  smoothing: number;
  /** Requests allowed to queue above the estimate, so that the limit can grow. */
  queueSize: number;
}

/** Netflix concurrency-limits' defaults, a lower floor apart (OverloadSettings sets it). */
export const GRADIENT2_DEFAULTS: Omit<Gradient2Options, 'minLimit' | 'maxLimit'> = {
  initialLimit: 20,
  tolerance: 1.5,
  longWindow: 600,
  smoothing: 0.2,
  queueSize: 4,
};

/**
 * Netflix concurrency-limits' Gradient2 (`Gradient2Limit.java`): the concurrency limit follows
 * the ratio of the long-run latency to the latest one. While the latency stays within
 * `tolerance` of its long-run average the limit grows by `queueSize`; past it, the limit shrinks
 * in proportion, at most by half per update. The long-run average forgets an overload faster
 * than it learns one, so that the limit recovers once the latency is back. The limit does not
 * grow while fewer than half of it were in flight: no evidence that more would be served.
 */
export class Gradient2Limit {
  private estimate: number;
  private longRtt = 0;
  private longSamples = 0;

  constructor(private readonly options: Gradient2Options) {
    this.estimate = clamp(options.initialLimit, options.minLimit, options.maxLimit);
  }

  /** The current limit: requests that may be in flight at once. */
  get limit(): number {
    return Math.floor(this.estimate);
  }

  /**
   * One window's sample: its average latency, the most requests it had in flight at once, and
   * whether it saw a drop (an overload signal other than latency): then the limit shrinks by
   * the largest step the gradient allows.
   */
  update(rttMs: number, maxInFlight: number, dropped = false): void {
    const { tolerance, smoothing, queueSize, minLimit, maxLimit } = this.options;
    const longRtt = this.addToLongRtt(rttMs);
    if (dropped) {
      this.estimate = clamp(this.estimate * (1 - smoothing / 2), minLimit, maxLimit);
      return;
    }
    // Back from an overload: forget it faster than the moving average alone would.
    if (longRtt / rttMs > 2) this.longRtt *= 0.95;
    if (maxInFlight < this.estimate / 2) return;
    const gradient = Math.max(0.5, Math.min(1, (tolerance * longRtt) / rttMs));
    const next = this.estimate * gradient + queueSize;
    this.estimate = clamp(this.estimate * (1 - smoothing) + next * smoothing, minLimit, maxLimit);
  }

  /** The exponential moving average, a plain average over its first ten samples (a warm-up). */
  private addToLongRtt(rttMs: number): number {
    this.longSamples++;
    if (this.longSamples <= 10) {
      this.longRtt += (rttMs - this.longRtt) / this.longSamples;
    } else {
      this.longRtt += (rttMs - this.longRtt) * (2 / (this.options.longWindow + 1));
    }
    return this.longRtt;
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, value));
}
