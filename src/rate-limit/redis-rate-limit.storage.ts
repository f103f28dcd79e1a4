import type { BeforeApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { PinoLogger } from 'nestjs-pino';
import {
  BudgetLeases,
  LEASE_FLOOR,
  LEASE_MS,
  LEASE_SHARE,
  LeaseReturn,
  MAX_LEASE,
  RESET_TOLERANCE_MS,
} from './budget-leases';
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
 * One atomic step per request, for every window, the rejection count, the ban and a lease.
 * KEYS: ban, rejections, then one counter per window. ARGV: ban threshold, ban length in ms
 * (0: the caller records bans), the most requests to lease beyond this one (0: none), the lease
 * share and floor (see budget-leases.ts), then limit and ttl (ms) per window.
 * Returns: outcome (0 rejected, 1 admitted, 2 banned, 3 ban now), ban ms left or requests leased,
 * then count and ms-to-reset per window.
 */
const HIT_SCRIPT = `
local n = #KEYS - 2
local counts, ttls, fresh = {}, {}, {}
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i + 2]) or '0')
  ttls[i] = redis.call('PTTL', KEYS[i + 2])
  fresh[i] = ttls[i] < 0
  if fresh[i] then counts[i] = 0; ttls[i] = tonumber(ARGV[5 + 2 * i]) end
end
local function reply(outcome, extra)
  local out = { outcome, extra }
  for i = 1, n do out[#out + 1] = counts[i]; out[#out + 1] = ttls[i] end
  return out
end
local banLeft = redis.call('PTTL', KEYS[1])
if banLeft > 0 then return reply(2, banLeft) end
local blockingTtl = -1
for i = 1, n do
  if counts[i] >= tonumber(ARGV[4 + 2 * i]) and ttls[i] > blockingTtl then blockingTtl = ttls[i] end
end
if blockingTtl < 0 then
  local lease = tonumber(ARGV[3])
  for i = 1, n do
    local remaining = tonumber(ARGV[4 + 2 * i]) - counts[i] - 1
    if remaining < tonumber(ARGV[5]) then lease = 0
    else lease = math.min(lease, math.floor(remaining / tonumber(ARGV[4]))) end
  end
  for i = 1, n do
    counts[i] = redis.call('INCRBY', KEYS[i + 2], 1 + lease)
    if fresh[i] then redis.call('PEXPIRE', KEYS[i + 2], ttls[i]) end
  end
  return reply(1, lease)
end
local rejections = redis.call('INCR', KEYS[2])
if rejections == 1 then redis.call('PEXPIRE', KEYS[2], blockingTtl) end
if rejections > tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[2])
  local banMs = tonumber(ARGV[2])
  if banMs > 0 then redis.call('SET', KEYS[1], '1', 'PX', banMs) end
  return reply(3, banMs)
end
return reply(0, 0)
`;

/**
 * Hands a lease's unused requests back. KEYS: one counter per window. ARGV: the requests, the
 * tolerance in ms, then each window's ms-to-reset as the lease knew it: a counter whose reset is
 * elsewhere belongs to a newer window, which owes the lease nothing.
 */
const RETURN_SCRIPT = `
for i = 1, #KEYS do
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl > 0 and math.abs(ttl - tonumber(ARGV[2 + i])) <= tonumber(ARGV[2]) then
    local count = tonumber(redis.call('GET', KEYS[i]) or '0')
    redis.call('DECRBY', KEYS[i], math.min(tonumber(ARGV[1]), count))
  end
end
return 0
`;

/**
 * Adds requests to a lease held here, counting no request. KEYS: one counter per window. ARGV:
 * the most requests to lease, the lease share and floor, then the limit per window. Grants none if
 * a window has reset (its next request starts it, one at a time) or is short of room.
 * Returns: requests leased, then count and ms-to-reset per window.
 */
const TOP_UP_SCRIPT = `
local n = #KEYS
local lease = tonumber(ARGV[1])
local counts, ttls = {}, {}
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  ttls[i] = redis.call('PTTL', KEYS[i])
  local remaining = tonumber(ARGV[3 + i]) - counts[i]
  if ttls[i] <= 0 or remaining < tonumber(ARGV[3]) then lease = 0
  else lease = math.min(lease, math.floor(remaining / tonumber(ARGV[2]))) end
end
if lease > 0 then
  for i = 1, n do counts[i] = redis.call('INCRBY', KEYS[i], lease) end
end
local out = { lease }
for i = 1, n do out[#out + 1] = counts[i]; out[#out + 1] = ttls[i] end
return out
`;

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
 * Redis: no offline queue, a 500 ms command timeout), logs a warning once per outage, and goes
 * back to Redis by itself on the next request after it returns.
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

  /** Synchronous, with no round trip, while the tracker holds a lease. */
  hit(tracker: string, windows: WindowSpec[], ban: BanPolicy): HitResult | Promise<HitResult> {
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
      reply = await this.commands.rateLimitHit.call(this.redis, keys.length, ...keys, ...args);
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
      reply = await this.commands.rateLimitTopUp.call(
        this.redis,
        windows.length,
        ...windows.map((w) => windowKey(tracker, w.name)),
        MAX_LEASE,
        LEASE_SHARE,
        LEASE_FLOOR,
        ...windows.map((w) => w.limit),
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
      await this.commands.rateLimitReturn.call(
        this.redis,
        windows.length,
        ...windows.map((w) => windowKey(tracker, w.name)),
        unused,
        RESET_TOLERANCE_MS,
        ...windows.map((w) => w.resetAtMs - now),
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
      const replies = (await pipeline.exec()) ?? [];
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
