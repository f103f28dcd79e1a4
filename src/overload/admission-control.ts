import { performance } from 'node:perf_hooks';
import type { Gradient2Limit } from './gradient2-limit';
import type { LoopDelayReading } from './loop-delay';

/**
 * How much a request matters when the instance is overloaded, highest last to go (the criticality
 * of Google's SRE book, "Handling Overload"): a write a customer waits on (a cancel) with a valid
 * key; any other request with a valid key; a request whose key is missing, made up or not yet
 * known to this instance. Probes and the admin listener are never asked.
 */
export type Criticality = 'critical' | 'default' | 'sheddable';

/** The share of the limit each criticality may fill: the less critical are refused first. */
const SHARE_OF_LIMIT: Record<Criticality, number> = { critical: 1, default: 0.8, sheddable: 0.5 };

/** A window of samples closes after this long and this many responses, whichever is later. */
const WINDOW_MS = 100;
const WINDOW_SAMPLES = 10;

/**
 * How long the event loop must have run late, window after window, before it counts as an
 * overload: a loop late for a moment (a garbage collection, the process off its core while the
 * database or a neighbour runs) is no queue, and shrinking the limit for it refuses requests a
 * moment later that would have been served in time.
 */
const SUSTAINED_LATE_MS = 1_000;

/**
 * Admission at the door: a request is let in while the requests in flight stay under its share of
 * an adaptive concurrency limit ({@link Gradient2Limit}), else refused at once. Each admitted
 * request's time, from admission to its response's start, is sampled; each window of samples
 * (their average, as Netflix's `WindowedLimit` does) updates the limit. While the event loop
 * has run late by more than `maxLoopDelayMs` (`LoopDelay`, the median timer lag) in every window
 * for a second, each window counts as a drop, as a refused request does in Netflix's limits: the
 * limit then shrinks, whatever the latency of the few admitted (on a process bound by its CPU, the queue builds in
 * the sockets, not among the requests let in). A loop busy nearly all of the time but coming
 * round in time is not a queue, and does not shrink the limit.
 */
export class AdmissionControl {
  private inFlight = 0;
  private windowStart: number;
  private samples = 0;
  private rttSum = 0;
  private maxInFlight = 0;
  /** When the loop started reading late in every window since, if it does now. */
  private lateSince: number | undefined;

  constructor(
    private readonly gradient: Gradient2Limit,
    private readonly loopDelay: LoopDelayReading,
    private readonly maxLoopDelayMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.windowStart = now();
  }

  /** The limit now: how many requests may be in flight at once. */
  get limit(): number {
    return this.gradient.limit;
  }

  /** Requests admitted and not yet answered. */
  get inFlightCount(): number {
    return this.inFlight;
  }

  /**
   * Whether a request of the lowest criticality may come in: while the requests in flight fill
   * less than its share. It takes no place of the limit and is not timed: without a known key it
   * is answered from the key cache or within the budgets of key lookups, its cost bounded
   * there; what it must not do is come in while the instance is busy with keyed work.
   */
  admitsSheddable(): boolean {
    return this.inFlight < this.gradient.limit * SHARE_OF_LIMIT.sheddable;
  }

  /**
   * Lets one request in, or not. Admitted, it returns the time it was admitted: give it back to
   * {@link release} when its response starts.
   */
  tryAcquire(criticality: Criticality): number | undefined {
    if (this.inFlight >= this.gradient.limit * SHARE_OF_LIMIT[criticality]) return undefined;
    this.inFlight++;
    if (this.inFlight > this.maxInFlight) this.maxInFlight = this.inFlight;
    return this.now();
  }

  /** The response of a request {@link tryAcquire} admitted at `admittedAt` has started. */
  release(admittedAt: number): void {
    this.inFlight--;
    const now = this.now();
    this.samples++;
    this.rttSum += now - admittedAt;
    if (this.samples < WINDOW_SAMPLES || now - this.windowStart < WINDOW_MS) return;
    // A window of answers in well under a millisecond says nothing of the load.
    const average = Math.max(this.rttSum / this.samples, 0.1);
    this.gradient.update(average, this.maxInFlight, this.loopLateFor(now) >= SUSTAINED_LATE_MS);
    this.windowStart = now;
    this.samples = 0;
    this.rttSum = 0;
    this.maxInFlight = this.inFlight;
  }

  /** How long, in ms, the loop has read late in every window up to this one (0 if not now). */
  private loopLateFor(now: number): number {
    if (this.loopDelay() <= this.maxLoopDelayMs) {
      this.lateSince = undefined;
      return 0;
    }
    this.lateSince ??= this.windowStart;
    return now - this.lateSince;
  }
}
