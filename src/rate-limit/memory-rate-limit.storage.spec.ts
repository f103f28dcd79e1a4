import { MemoryRateLimitStorage } from './memory-rate-limit.storage';
import { BanPolicy, WindowSpec } from './rate-limit.storage';

const NEVER: BanPolicy = { after: 1000, storeForMs: 0 };

describe('MemoryRateLimitStorage', () => {
  let now: number;
  let storage: MemoryRateLimitStorage;
  const windows: WindowSpec[] = [
    { name: 'minute', limit: 2, ttlMs: 60_000 },
    { name: 'day', limit: 3, ttlMs: 86_400_000 },
  ];

  beforeEach(() => {
    now = 1_000_000;
    storage = new MemoryRateLimitStorage(() => now);
  });

  it('admits while every window has room, counting in all of them', async () => {
    const first = await storage.hit('k', windows, NEVER);
    expect(first.outcome).toBe('admitted');
    expect(first.windows.map((w) => w.count)).toEqual([1, 1]);
    expect(first.windows.map((w) => w.resetAtMs)).toEqual([now + 60_000, now + 86_400_000]);
  });

  it('counts nothing for a rejected request', async () => {
    await storage.hit('k', windows, NEVER);
    await storage.hit('k', windows, NEVER);
    const rejected = await storage.hit('k', windows, NEVER);
    expect(rejected.outcome).toBe('rejected');
    expect(rejected.windows.map((w) => w.count)).toEqual([2, 2]);
    now += 60_000; // the minute window resets; the day still has exactly one request left
    expect((await storage.hit('k', windows, NEVER)).outcome).toBe('admitted');
    expect((await storage.hit('k', windows, NEVER)).outcome).toBe('rejected');
  });

  it('anchors a window at its first request and restarts it after it resets', async () => {
    now += 12_345;
    const first = await storage.hit('k', windows, NEVER);
    expect(first.windows[0].resetAtMs).toBe(now + 60_000);
    now += 60_000;
    const next = await storage.hit('k', windows, NEVER);
    expect(next.windows[0]).toMatchObject({ count: 1, resetAtMs: now + 60_000 });
  });

  it('keeps trackers apart', async () => {
    await storage.hit('a', windows, NEVER);
    await storage.hit('a', windows, NEVER);
    expect((await storage.hit('b', windows, NEVER)).outcome).toBe('admitted');
  });

  it('asks for a ban after more rejections than tolerated, then counts afresh', async () => {
    const policy = { after: 2, storeForMs: 0 };
    await storage.hit('k', windows, policy);
    await storage.hit('k', windows, policy);
    expect((await storage.hit('k', windows, policy)).outcome).toBe('rejected');
    expect((await storage.hit('k', windows, policy)).outcome).toBe('rejected');
    expect((await storage.hit('k', windows, policy)).outcome).toBe('ban');
    expect((await storage.hit('k', windows, policy)).outcome).toBe('rejected');
  });

  it('keeps an anonymous ban itself, for its length', async () => {
    const policy = { after: 0, storeForMs: 5_000 };
    await storage.hit('ip', windows, policy);
    await storage.hit('ip', windows, policy);
    expect((await storage.hit('ip', windows, policy)).outcome).toBe('ban');
    const banned = await storage.hit('ip', windows, policy);
    expect(banned).toMatchObject({ outcome: 'banned', bannedUntilMs: now + 5_000 });
    now += 60_000;
    expect((await storage.hit('ip', windows, policy)).outcome).toBe('admitted');
  });

  it('peeks without counting', async () => {
    await storage.hit('k', windows, NEVER);
    expect((await storage.peek('k', windows)).map((w) => w.count)).toEqual([1, 1]);
    expect((await storage.peek('k', windows)).map((w) => w.count)).toEqual([1, 1]);
  });

  it('stays bounded under a flood of distinct trackers', async () => {
    for (let i = 0; i < 300_000; i++) await storage.hit(`ip:${i}`, windows, NEVER);
    const size = (storage as unknown as { counters: { size: number } }).counters.size;
    expect(size).toBeLessThanOrEqual(250_000);
  });

  it('serves @nestjs/throttler through the one-window interface', async () => {
    const first = await storage.increment('t', 60_000, 1, 60_000, 'default');
    expect(first).toMatchObject({ totalHits: 1, isBlocked: false, timeToExpire: 60 });
    expect(await storage.increment('t', 60_000, 1, 60_000, 'default')).toMatchObject({
      isBlocked: true,
    });
  });
});
