import type { ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';
import {
  BanPolicy,
  HitResult,
  NO_BAN,
  toThrottlerRecord,
  RateLimitStorage,
  WindowSpec,
  WindowState,
} from './rate-limit.storage';

interface Counter {
  count: number;
  resetAtMs: number;
}

/**
 * Most trackers (windows, rejection counts, bans) kept at once. Entries expire with their window;
 * beyond this, the least recently used go first, so memory stays bounded under millions of
 * distinct keys and IPs.
 */
const MAX_ENTRIES = 250_000;

/**
 * In-process counters: O(1) per request, no timer per key and no list of hits (the stock
 * throttler storage keeps one entry per hit: 100,000 for a business key's day).
 */
export class MemoryRateLimitStorage implements RateLimitStorage {
  private readonly counters = new LRUCache<string, Counter>({
    max: MAX_ENTRIES,
    ttlAutopurge: false,
  });

  constructor(private readonly now: () => number = Date.now) {}

  hit(tracker: string, windows: WindowSpec[], ban: BanPolicy): HitResult {
    const now = this.now();
    const banned = this.live(`${tracker}:ban`, now);
    const counters = windows.map((w) => this.live(`${tracker}:${w.name}`, now));
    if (banned) {
      return {
        outcome: 'banned',
        windows: this.states(windows, counters),
        bannedUntilMs: banned.resetAtMs,
      };
    }

    const full = windows.filter((w, i) => (counters[i]?.count ?? 0) >= w.limit);
    if (full.length === 0) {
      windows.forEach((w, i) => {
        const counter = counters[i] ?? this.start(`${tracker}:${w.name}`, now + w.ttlMs);
        counter.count++;
        counters[i] = counter;
      });
      return { outcome: 'admitted', windows: this.states(windows, counters) };
    }

    // Rejections are counted until the blocking window (the full one that resets last) resets.
    const blockingResetMs = Math.max(
      ...full.map((w) => counters[windows.indexOf(w)]?.resetAtMs ?? now),
    );
    const rejections =
      this.live(`${tracker}:rejected`, now) ?? this.start(`${tracker}:rejected`, blockingResetMs);
    rejections.count++;
    let outcome: HitResult['outcome'] = 'rejected';
    if (rejections.count > ban.after) {
      outcome = 'ban';
      this.counters.delete(`${tracker}:rejected`);
      if (ban.storeForMs > 0) this.start(`${tracker}:ban`, now + ban.storeForMs).count = 1;
    }
    return { outcome, windows: this.states(windows, counters) };
  }

  peek(tracker: string, windows: WindowSpec[]): WindowState[] {
    const now = this.now();
    return this.states(
      windows,
      windows.map((w) => this.live(`${tracker}:${w.name}`, now)),
    );
  }

  /** The one-window interface of `@nestjs/throttler`'s ThrottlerStorage. */
  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): ReturnType<ThrottlerStorage['increment']> {
    const result = this.hit(key, [{ name: throttlerName, limit, ttlMs: ttl }], NO_BAN);
    return Promise.resolve(toThrottlerRecord(result, blockDuration, this.now()));
  }

  private live(key: string, now: number): Counter | undefined {
    const counter = this.counters.get(key);
    if (counter && counter.resetAtMs <= now) {
      this.counters.delete(key);
      return undefined;
    }
    return counter;
  }

  private start(key: string, resetAtMs: number): Counter {
    const counter = { count: 0, resetAtMs };
    this.counters.set(key, counter, { ttl: Math.max(1, resetAtMs - this.now()) });
    return counter;
  }

  private states(windows: WindowSpec[], counters: (Counter | undefined)[]): WindowState[] {
    const now = this.now();
    return windows.map((w, i) => ({
      name: w.name,
      limit: w.limit,
      count: counters[i]?.count ?? 0,
      resetAtMs: counters[i]?.resetAtMs ?? now + w.ttlMs,
    }));
  }
}
