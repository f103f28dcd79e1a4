import type { BeforeApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { PinoLogger } from 'nestjs-pino';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BudgetLeases,
  LEASE_FLOOR,
  LEASE_MS,
  LEASE_SHARE,
  LeaseReturn,
  MAX_LEASE,
  RESET_TOLERANCE_MS,
} from './budget-leases';
import { replyWithin } from '../redis/redis-reply';
import { MemoryRateLimitStorage } from './memory-rate-limit.storage';
import {
  BanPolicy,
  HitOutcome,
  HitResult,
  RateLimitStorage,
  WindowSpec,
  WindowState,
} from './rate-limit.storage';

/**
 * The Lua scripts (src/rate-limit/lua/, each with its KEYS, ARGV and reply described at its top),
 * read once when the module loads: a build without them stops at startup, not at the first request.
 * `npm run build` copies them beside the compiled code (nest-cli.json `assets`).
 */
const script = (name: string): string => readFileSync(join(__dirname, 'lua', name), 'utf8');
const HIT_SCRIPT = script('hit.lua');
const TOP_UP_SCRIPT = script('top-up-lease.lua');
const RETURN_SCRIPT = script('return-lease.lua');

const OUTCOMES: Record<number, HitOutcome> = {
  0: 'rejected',
  1: 'admitted',
  2: 'banned',
  3: 'ban',
};

type ScriptCommand = (...args: (string | number)[]) => Promise<number[]>;
interface LeaseCommands {
  rateLimitHit: ScriptCommand;
  rateLimitTopUp: ScriptCommand;
  rateLimitReturn: ScriptCommand;
}

const noop = (): void => undefined;

/** The windows' state from a script's reply: count and ms-to-reset per window from `offset` on. */
function countedWindows(
  windows: WindowSpec[],
  reply: number[],
  offset: number,
  now: number,
): WindowState[] {
  return windows.map((w, i) => ({
    name: w.name,
    limit: w.limit,
    count: reply[offset + 2 * i],
    resetAtMs: now + reply[offset + 1 + 2 * i],
  }));
}

const windowKey = (tracker: string, window: string): string => `rl:{${tracker}}:${window}`;

/**
 * Counters in Redis, so every instance behind a load balancer enforces one limit per key. The
 * script is registered with `defineCommand` (EVALSHA, not the whole script per request) and its
 * keys share a hash tag, so it runs on Redis Cluster too. A busy tracker with room to spare
 * takes a lease of its budget in the same step (budget-leases.ts): its next requests are admitted
 * here without a round trip, while the counters in Redis already include them.
 *
 * Policy when Redis is unreachable: fail open to per-instance limits. Each instance keeps
 * limiting with in-process counters (so no client is unlimited, and nothing waits on a dead
 * Redis: no offline queue, 500 ms at most for a reply, `replyWithin`), logs a warning once per
 * outage, and goes back to Redis by itself on the next request after it returns.
 */
export class RedisRateLimitStorage implements RateLimitStorage, BeforeApplicationShutdown {
  private degraded = false;
  private readonly leases = new BudgetLeases();
  private readonly commands: LeaseCommands;
  /** Hands lapsed leases back even when their trackers send nothing more. */
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly logger: PinoLogger,
    private readonly onFallback: () => void = () => undefined,
    /** Where the counters are kept while Redis is unreachable. */
    private readonly fallback = new MemoryRateLimitStorage(),
  ) {
    redis.defineCommand('rateLimitHit', { lua: HIT_SCRIPT });
    redis.defineCommand('rateLimitTopUp', { lua: TOP_UP_SCRIPT });
    redis.defineCommand('rateLimitReturn', { lua: RETURN_SCRIPT });
    this.commands = redis as unknown as LeaseCommands;
    this.sweeper = setInterval(() => void this.handBackAll(this.leases.release()), LEASE_MS);
    this.sweeper.unref();
    redis.on('ready', () => void this.checkEvictionPolicy());
    if (redis.status === 'ready') void this.checkEvictionPolicy();
  }

  /**
   * Every counter in Redis expires (its window's length), so under any `maxmemory-policy` but
   * `noeviction` Redis may evict a key's counters to make room for anonymous ones: a flood of
   * addresses would then reset a key's windows. Said once per connection, at `warn`; a Redis that
   * refuses CONFIG (some managed ones) is taken at its word.
   */
  private async checkEvictionPolicy(): Promise<void> {
    let policy: unknown;
    try {
      policy = ((await this.redis.config('GET', 'maxmemory-policy')) as unknown[])[1];
    } catch (error) {
      this.logger.debug(
        { err: error instanceof Error ? error.message : String(error) },
        'could not read Redis maxmemory-policy',
      );
      return;
    }
    if (typeof policy === 'string' && policy !== 'noeviction') {
      this.logger.warn(
        { policy },
        `Redis maxmemory-policy is ${policy}: under memory pressure it may evict keys' rate-limit counters (and reset their windows); set maxmemory-policy noeviction`,
      );
    }
  }

  /** No round trip while the tracker holds a lease. */
  async hit(tracker: string, windows: WindowSpec[], ban: BanPolicy): Promise<HitResult> {
    const leased = this.leases.take(tracker, windows, (back) => void this.handBack(back));
    if (!leased) return this.hitInRedis(tracker, windows, ban);
    if (this.leases.wantsTopUp(tracker)) void this.topUp(tracker, windows);
    return { outcome: 'admitted', windows: leased };
  }

  /** Unused leases go back before the Redis client closes (at application shutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    await this.handBackAll(this.leases.release(true));
  }

  private async hitInRedis(
    tracker: string,
    windows: WindowSpec[],
    ban: BanPolicy,
  ): Promise<HitResult> {
    const keys = [
      `rl:{${tracker}}:ban`,
      `rl:{${tracker}}:rejected`,
      ...windows.map((w) => windowKey(tracker, w.name)),
    ];
    const lease = this.leases.wants(tracker) ? MAX_LEASE : 0;
    const args = [
      ban.after,
      ban.storeForMs,
      lease,
      LEASE_SHARE,
      LEASE_FLOOR,
      ...windows.flatMap((w) => [w.limit, w.ttlMs]),
    ];
    let reply: number[];
    try {
      reply = await replyWithin(
        this.commands.rateLimitHit.call(this.redis, keys.length, ...keys, ...args),
      );
    } catch (error) {
      if (lease > 0) this.leases.grant(tracker, windows, [], 0, noop);
      return this.degrade(error, () => this.fallback.hit(tracker, windows, ban));
    }
    this.recovered();
    const now = Date.now();
    const outcome = OUTCOMES[reply[0]];
    const counted = countedWindows(windows, reply, 2, now);
    const leased = outcome === 'admitted' ? reply[1] : 0;
    if (lease > 0) {
      this.leases.grant(tracker, windows, counted, leased, (back) => void this.handBack(back));
    }
    if (outcome !== 'admitted') {
      return {
        outcome,
        windows: counted,
        bannedUntilMs: outcome === 'banned' ? now + reply[1] : undefined,
      };
    }
    // This request's own count: the leased requests are not spent yet.
    return { outcome, windows: counted.map((w) => ({ ...w, count: w.count - leased })) };
  }

  /** More requests for a lease held here; if Redis cannot be asked, the lease just runs out. */
  private async topUp(tracker: string, windows: WindowSpec[]): Promise<void> {
    let reply: number[] = [0];
    try {
      reply = await replyWithin(
        this.commands.rateLimitTopUp.call(
          this.redis,
          windows.length,
          ...windows.map((w) => windowKey(tracker, w.name)),
          MAX_LEASE,
          LEASE_SHARE,
          LEASE_FLOOR,
          ...windows.map((w) => w.limit),
        ),
      );
    } catch {
      // Not needed for any request: the next one after the lease goes to Redis (or its fallback).
    }
    const now = Date.now();
    const counted = countedWindows(windows, reply, 1, now);
    this.leases.grant(tracker, windows, counted, reply[0], (back) => void this.handBack(back));
  }

  private async handBackAll(returns: LeaseReturn[]): Promise<void> {
    await Promise.all(returns.map((back) => this.handBack(back)));
  }

  /** Best effort: a return lost to an outage only leaves a window short of that many requests. */
  private async handBack({ tracker, unused, windows }: LeaseReturn): Promise<void> {
    const now = Date.now();
    try {
      await replyWithin(
        this.commands.rateLimitReturn.call(
          this.redis,
          windows.length,
          ...windows.map((w) => windowKey(tracker, w.name)),
          unused,
          RESET_TOLERANCE_MS,
          ...windows.map((w) => w.resetAtMs - now),
        ),
      );
    } catch (error) {
      this.logger.debug(
        { err: error instanceof Error ? error.message : String(error), tracker, unused },
        'could not hand back the unused part of a rate-limit lease',
      );
    }
  }

  async peek(tracker: string, windows: WindowSpec[]): Promise<WindowState[]> {
    try {
      const pipeline = this.redis.pipeline();
      for (const w of windows)
        pipeline.get(windowKey(tracker, w.name)).pttl(windowKey(tracker, w.name));
      const replies = (await replyWithin(pipeline.exec())) ?? [];
      this.recovered();
      const now = Date.now();
      return windows.map((w, i) => {
        const ttl = Number(replies[2 * i + 1]?.[1] ?? -2);
        return {
          name: w.name,
          limit: w.limit,
          count: ttl > 0 ? Number(replies[2 * i]?.[1] ?? 0) : 0,
          resetAtMs: now + (ttl > 0 ? ttl : w.ttlMs),
        };
      });
    } catch (error) {
      return this.degrade(error, () => this.fallback.peek(tracker, windows));
    }
  }

  private degrade<T>(error: unknown, local: () => T): T {
    if (!this.degraded) {
      this.degraded = true;
      this.logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'Redis unreachable: rate limits fall back to per-instance counters until it returns',
      );
    }
    this.onFallback();
    return local();
  }

  private recovered(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.logger.info('Redis reachable again: rate limits are shared across instances');
  }
}
