/**
 * One fixed window of this process alone: at most `limit` units in each window of `ttlMs`, the
 * window anchored at its first unit (as the rate-limit storage's windows are). Taking a unit is
 * synchronous, so requests in flight at once can never take more than the limit between them.
 */
export class FixedWindowCounter {
  private count = 0;
  /** When the current window ends (ms since the epoch); none has started before the first unit. */
  private endsAtMs = -Infinity;

  constructor(
    private readonly limit: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Takes a unit if the window has room: returns the window it was taken from (its end, for
   * `giveBack`), or `undefined`, having taken nothing, when it is full.
   */
  take(): number | undefined {
    const now = this.now();
    if (now >= this.endsAtMs) {
      this.count = 0;
      this.endsAtMs = now + this.ttlMs;
    }
    if (this.count >= this.limit) return undefined;
    this.count++;
    return this.endsAtMs;
  }

  /** Returns a unit `take` gave, unless its window has ended since (the new one owes it nothing). */
  giveBack(window: number): void {
    if (window === this.endsAtMs && this.now() < window && this.count > 0) this.count--;
  }
}
