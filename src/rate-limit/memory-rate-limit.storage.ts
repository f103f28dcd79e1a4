import { LRUCache } from 'lru-cache';
import {
  BanPolicy,
  HitResult,
  isKeyTracker,
  RateLimitStorage,
  WindowSpec,
  WindowState,
} from './rate-limit.storage';

interface Counter {
  count: number;
  resetAtMs: number;
}

/** Everything counted for one tracker (a key or an IP): one cache entry, one lookup a request. */
interface Tracker {
  /** By window name; a counter whose window has reset is stale, and restarts when counted in. */
  windows: Map<string, Counter>;
  /** Rejections since the blocking window filled, toward a ban. */
  rejected?: Counter;
  /** An anonymous ban kept here: until then (ms since the epoch). */
  bannedUntilMs: number;
}

/** Anonymous trackers kept at once by default (`RATE_LIMIT_ANONYMOUS_TRACKERS`). */
export const DEFAULT_MAX_ANONYMOUS_TRACKERS = 100_000;

/** Key trackers held before the first sweep of stale ones: see `sweepKeyTrackers`. */
const FIRST_KEY_SWEEP_AT = 1_024;

export interface MemoryRateLimitOptions {
  /**
   * Most anonymous trackers (IPs, and their budgets of key lookups) kept at once; beyond it the
   * least recently used go first, so their memory stays bounded whatever the number of addresses.
   */
  maxAnonymousTrackers?: number;
  now?: () => number;
}

/**
 * In-process counters: one cache lookup per request, no timer and no list of hits (the stock
 * throttler storage keeps one entry per hit: 100,000 for a business key's day).
 *
 * Keys' trackers and anonymous ones live apart. Anonymous trackers are as many as the addresses a
 * client can send from (any `X-Forwarded-For` under TRUST_PROXY, every /64 of an IPv6 range): a
 * bounded LRU holds them, and a flood of new addresses pushes out only other addresses. Keys'
 * trackers are as many as the keys in use, which the keys table bounds: they are never pushed
 * out, so no traffic of other clients resets a key's windows or lifts its ban; one whose windows
 * have all reset holds nothing and is dropped by a sweep.
 */
export class MemoryRateLimitStorage implements RateLimitStorage {
  private readonly keys = new Map<string, Tracker>();
  private readonly anonymous: LRUCache<string, Tracker>;
  private readonly now: () => number;
  /** The key trackers' count at which stale ones are next swept. */
  private sweepKeysAt = FIRST_KEY_SWEEP_AT;

  constructor(options: MemoryRateLimitOptions = {}) {
    this.now = options.now ?? Date.now;
    this.anonymous = new LRUCache({
      max: options.maxAnonymousTrackers ?? DEFAULT_MAX_ANONYMOUS_TRACKERS,
    });
  }

  hit(trackerKey: string, windows: WindowSpec[], ban: BanPolicy): Promise<HitResult> {
    return Promise.resolve(this.count(trackerKey, windows, ban));
  }

  peek(trackerKey: string, windows: WindowSpec[]): Promise<WindowState[]> {
    const now = this.now();
    const tracker = isKeyTracker(trackerKey)
      ? this.keys.get(trackerKey)
      : this.anonymous.peek(trackerKey);
    return Promise.resolve(states(tracker, windows, now));
  }

  /** One request's hit, in one synchronous step: nothing else counts in between. */
  private count(trackerKey: string, windows: WindowSpec[], ban: BanPolicy): HitResult {
    const now = this.now();
    const tracker = this.trackerFor(trackerKey, now);
    if (tracker.bannedUntilMs > now) {
      return {
        outcome: 'banned',
        windows: states(tracker, windows, now),
        bannedUntilMs: tracker.bannedUntilMs,
      };
    }

    // A request is admitted if no window is full; else the full one that resets last blocks it.
    let full = false;
    let blockingResetMs = now;
    for (const w of windows) {
      const counter = live(tracker, w, now);
      if ((counter?.count ?? 0) < w.limit) continue;
      full = true;
      blockingResetMs = Math.max(blockingResetMs, counter?.resetAtMs ?? now);
    }
    if (!full) {
      for (const w of windows) {
        let counter = live(tracker, w, now);
        if (!counter) {
          counter = { count: 0, resetAtMs: now + w.ttlMs };
          tracker.windows.set(w.name, counter);
        }
        counter.count++;
      }
      return { outcome: 'admitted', windows: states(tracker, windows, now) };
    }

    // Rejections are counted until the blocking window resets.
    if (!tracker.rejected || tracker.rejected.resetAtMs <= now)
      tracker.rejected = { count: 0, resetAtMs: blockingResetMs };
    tracker.rejected.count++;
    let outcome: HitResult['outcome'] = 'rejected';
    if (tracker.rejected.count > ban.after) {
      outcome = 'ban';
      tracker.rejected = undefined;
      if (ban.storeForMs > 0) tracker.bannedUntilMs = now + ban.storeForMs;
    }
    return { outcome, windows: states(tracker, windows, now) };
  }

  private trackerFor(trackerKey: string, now: number): Tracker {
    const keyed = isKeyTracker(trackerKey);
    let tracker = keyed ? this.keys.get(trackerKey) : this.anonymous.get(trackerKey);
    if (tracker) return tracker;
    tracker = { windows: new Map(), bannedUntilMs: 0 };
    if (!keyed) {
      this.anonymous.set(trackerKey, tracker);
      return tracker;
    }
    if (this.keys.size >= this.sweepKeysAt) this.sweepKeyTrackers(now);
    this.keys.set(trackerKey, tracker);
    return tracker;
  }

  /**
   * Drops the key trackers that hold nothing any more (every window reset, no rejection counting
   * toward a ban, no ban), and sweeps next when their number has doubled: at most twice as many
   * trackers as keys in use, at a constant cost per new tracker.
   */
  private sweepKeyTrackers(now: number): void {
    for (const [name, tracker] of this.keys) if (isStale(tracker, now)) this.keys.delete(name);
    this.sweepKeysAt = Math.max(FIRST_KEY_SWEEP_AT, 2 * this.keys.size);
  }
}

function isStale(tracker: Tracker, now: number): boolean {
  if (tracker.bannedUntilMs > now) return false;
  if (tracker.rejected && tracker.rejected.resetAtMs > now) return false;
  for (const counter of tracker.windows.values()) if (counter.resetAtMs > now) return false;
  return true;
}

/** The window's counter, unless it has reset (then the window is empty). */
function live(tracker: Tracker, w: WindowSpec, now: number): Counter | undefined {
  const counter = tracker.windows.get(w.name);
  return counter && counter.resetAtMs > now ? counter : undefined;
}

function states(tracker: Tracker | undefined, windows: WindowSpec[], now: number): WindowState[] {
  return windows.map((w) => {
    const counter = tracker && live(tracker, w, now);
    return {
      name: w.name,
      limit: w.limit,
      count: counter?.count ?? 0,
      resetAtMs: counter?.resetAtMs ?? now + w.ttlMs,
    };
  });
}
