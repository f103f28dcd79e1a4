import { LRUCache } from 'lru-cache';
import {
  BanPolicy,
  HitResult,
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

/**
 * Most trackers kept at once. Beyond this, the least recently used go first, so memory stays
 * bounded (about 60 MB at worst, measured) under millions of distinct keys and IPs. A window that has
 * reset is seen as such when next read; the tracker itself goes when others push it out.
 */
const MAX_TRACKERS = 100_000;

/**
 * In-process counters: one cache lookup per request, no timer and no list of hits (the stock
 * throttler storage keeps one entry per hit: 100,000 for a business key's day).
 */
export class MemoryRateLimitStorage implements RateLimitStorage {
  private readonly trackers = new LRUCache<string, Tracker>({ max: MAX_TRACKERS });

  constructor(private readonly now: () => number = Date.now) {}

  hit(trackerKey: string, windows: WindowSpec[], ban: BanPolicy): HitResult {
    const now = this.now();
    let tracker = this.trackers.get(trackerKey);
    if (!tracker) {
      tracker = { windows: new Map(), bannedUntilMs: 0 };
      this.trackers.set(trackerKey, tracker);
    }
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

  peek(trackerKey: string, windows: WindowSpec[]): WindowState[] {
    const now = this.now();
    const tracker = this.trackers.peek(trackerKey);
    return states(tracker, windows, now);
  }
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
