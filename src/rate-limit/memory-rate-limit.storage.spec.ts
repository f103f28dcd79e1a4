import { MemoryRateLimitStorage } from './memory-rate-limit.storage';
import { BanPolicy, keyTracker, WindowSpec } from './rate-limit.storage';

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
    storage = new MemoryRateLimitStorage({ now: () => now });
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

  it('stays bounded under a flood of distinct anonymous trackers', async () => {
    for (let i = 0; i < 150_000; i++) await storage.hit(`ip:${i}`, windows, NEVER);
    const size = (storage as unknown as { anonymous: { size: number } }).anonymous.size;
    expect(size).toBeLessThanOrEqual(100_000);
  });

  describe('keys apart from anonymous clients', () => {
    const keyWindows: WindowSpec[] = [
      { name: 'minute', limit: 10, ttlMs: 60_000 },
      { name: 'day', limit: 50, ttlMs: 86_400_000 },
    ];
    const banAfter2: BanPolicy = { after: 2, storeForMs: 0 };

    beforeEach(() => {
      storage = new MemoryRateLimitStorage({ now: () => now, maxAnonymousTrackers: 100 });
    });

    it("keeps a key's windows and rejections through a flood of anonymous trackers", async () => {
      for (let i = 0; i < 10; i++) await storage.hit(keyTracker('fam'), keyWindows, banAfter2);
      expect((await storage.hit(keyTracker('fam'), keyWindows, banAfter2)).outcome).toBe(
        'rejected',
      );
      for (let i = 0; i < 10_000; i++)
        await storage.hit(`ip:10.0.${i >> 8}.${i & 255}`, windows, NEVER);
      expect((await storage.peek(keyTracker('fam'), keyWindows)).map((w) => w.count)).toEqual([
        10, 10,
      ]);
      // The rejection before the flood still counts toward the ban.
      expect((await storage.hit(keyTracker('fam'), keyWindows, banAfter2)).outcome).toBe(
        'rejected',
      );
      expect((await storage.hit(keyTracker('fam'), keyWindows, banAfter2)).outcome).toBe('ban');
    });

    it('pushes out the least recently seen anonymous trackers only', async () => {
      await storage.hit('ip:first', windows, NEVER);
      for (let i = 0; i < 100; i++) await storage.hit(`ip:${i}`, windows, NEVER);
      expect((await storage.peek('ip:first', windows)).map((w) => w.count)).toEqual([0, 0]);
      expect((await storage.peek('ip:99', windows)).map((w) => w.count)).toEqual([1, 1]);
    });

    it('drops the trackers of keys whose windows have all reset, keeping the others', async () => {
      const keys = (storage as unknown as { keys: Map<string, unknown> }).keys;
      await storage.hit(keyTracker('busy'), keyWindows, NEVER);
      for (let i = 0; i < 2_000; i++) {
        await storage.hit(
          keyTracker(`k${i}`),
          [{ name: 'minute', limit: 5, ttlMs: 60_000 }],
          NEVER,
        );
      }
      now += 60_000;
      for (let i = 0; i < 2_000; i++) {
        await storage.hit(keyTracker(`later${i}`), keyWindows, NEVER);
      }
      expect(keys.size).toBeLessThan(4_001);
      expect((await storage.peek(keyTracker('busy'), keyWindows)).map((w) => w.count)).toEqual([
        0, 1,
      ]);
    });
  });
});
