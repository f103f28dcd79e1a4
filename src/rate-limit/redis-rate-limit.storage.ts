import type Redis from 'ioredis';
import { PinoLogger } from 'nestjs-pino';
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
 * One atomic step per request, for every window, the rejection count and the ban.
 * KEYS: ban, rejections, then one counter per window. ARGV: ban threshold, ban length in ms
 * (0: the caller records bans), then limit and ttl (ms) per window.
 * Returns: outcome (0 rejected, 1 admitted, 2 banned, 3 ban now), ban ms left, then count and
 * ms-to-reset per window.
 */
const HIT_SCRIPT = `
local n = #KEYS - 2
local counts, ttls = {}, {}
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i + 2]) or '0')
  ttls[i] = redis.call('PTTL', KEYS[i + 2])
  if ttls[i] < 0 then counts[i] = 0; ttls[i] = tonumber(ARGV[2 + 2 * i]) end
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
  if counts[i] >= tonumber(ARGV[1 + 2 * i]) and ttls[i] > blockingTtl then blockingTtl = ttls[i] end
end
if blockingTtl < 0 then
  for i = 1, n do
    counts[i] = redis.call('INCR', KEYS[i + 2])
    if counts[i] == 1 then redis.call('PEXPIRE', KEYS[i + 2], ttls[i]) end
  end
  return reply(1, 0)
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

const OUTCOMES: Record<number, HitOutcome> = {
  0: 'rejected',
  1: 'admitted',
  2: 'banned',
  3: 'ban',
};

type HitCommand = (...args: (string | number)[]) => Promise<number[]>;

/**
 * Counters in Redis, so every instance behind a load balancer enforces one limit per key. The
 * script is registered with `defineCommand` (EVALSHA, not the whole script per request) and its
 * keys share a hash tag, so it runs on Redis Cluster too.
 *
 * Policy when Redis is unreachable: fail open to per-instance limits. Each instance keeps
 * limiting with in-process counters (so no client is unlimited, and nothing waits on a dead
 * Redis: no offline queue, a 500 ms command timeout), logs a warning once per outage, and goes
 * back to Redis by itself on the next request after it returns.
 */
export class RedisRateLimitStorage implements RateLimitStorage {
  private readonly fallback = new MemoryRateLimitStorage();
  private degraded = false;

  constructor(
    private readonly redis: Redis,
    private readonly logger: PinoLogger,
    private readonly onFallback: () => void = () => undefined,
  ) {
    redis.defineCommand('rateLimitHit', { lua: HIT_SCRIPT });
  }

  async hit(tracker: string, windows: WindowSpec[], ban: BanPolicy): Promise<HitResult> {
    const keys = [
      `rl:{${tracker}}:ban`,
      `rl:{${tracker}}:rejected`,
      ...windows.map((w) => `rl:{${tracker}}:${w.name}`),
    ];
    const args = [ban.after, ban.storeForMs, ...windows.flatMap((w) => [w.limit, w.ttlMs])];
    let reply: number[];
    try {
      const command = (this.redis as unknown as { rateLimitHit: HitCommand }).rateLimitHit;
      reply = await command.call(this.redis, keys.length, ...keys, ...args);
    } catch (error) {
      return this.degrade(error, () => this.fallback.hit(tracker, windows, ban));
    }
    this.recovered();
    const now = Date.now();
    const outcome = OUTCOMES[reply[0]];
    return {
      outcome,
      windows: windows.map((w, i) => ({
        name: w.name,
        limit: w.limit,
        count: reply[2 + 2 * i],
        resetAtMs: now + reply[3 + 2 * i],
      })),
      bannedUntilMs: outcome === 'banned' ? now + reply[1] : undefined,
    };
  }

  async peek(tracker: string, windows: WindowSpec[]): Promise<WindowState[]> {
    try {
      const pipeline = this.redis.pipeline();
      for (const w of windows)
        pipeline.get(`rl:{${tracker}}:${w.name}`).pttl(`rl:{${tracker}}:${w.name}`);
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
