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

  it('admits while every window has room, counting in all of them', () => {
    const first = storage.hit('k', windows, NEVER);
    expect(first.outcome).toBe('admitted');
    expect(first.windows.map((w) => w.count)).toEqual([1, 1]);
    expect(first.windows.map((w) => w.resetAtMs)).toEqual([now + 60_000, now + 86_400_000]);
  });

  it('counts nothing for a rejected request', () => {
    storage.hit('k', windows, NEVER);
    storage.hit('k', windows, NEVER);
    const rejected = storage.hit('k', windows, NEVER);
    expect(rejected.outcome).toBe('rejected');
    expect(rejected.windows.map((w) => w.count)).toEqual([2, 2]);
    now += 60_000; // the minute window resets; the day still has exactly one request left
    expect(storage.hit('k', windows, NEVER).outcome).toBe('admitted');
    expect(storage.hit('k', windows, NEVER).outcome).toBe('rejected');
  });

  it('anchors a window at its first request and restarts it after it resets', () => {
    now += 12_345;
    const first = storage.hit('k', windows, NEVER);
    expect(first.windows[0].resetAtMs).toBe(now + 60_000);
    now += 60_000;
    const next = storage.hit('k', windows, NEVER);
    expect(next.windows[0]).toMatchObject({ count: 1, resetAtMs: now + 60_000 });
  });

  it('keeps trackers apart', () => {
    storage.hit('a', windows, NEVER);
    storage.hit('a', windows, NEVER);
    expect(storage.hit('b', windows, NEVER).outcome).toBe('admitted');
  });

  it('asks for a ban after more rejections than tolerated, then counts afresh', () => {
    const policy = { after: 2, storeForMs: 0 };
    storage.hit('k', windows, policy);
    storage.hit('k', windows, policy);
    expect(storage.hit('k', windows, policy).outcome).toBe('rejected');
    expect(storage.hit('k', windows, policy).outcome).toBe('rejected');
    expect(storage.hit('k', windows, policy).outcome).toBe('ban');
    expect(storage.hit('k', windows, policy).outcome).toBe('rejected');
  });

  it('keeps an anonymous ban itself, for its length', () => {
    const policy = { after: 0, storeForMs: 5_000 };
    storage.hit('ip', windows, policy);
    storage.hit('ip', windows, policy);
    expect(storage.hit('ip', windows, policy).outcome).toBe('ban');
    const banned = storage.hit('ip', windows, policy);
    expect(banned).toMatchObject({ outcome: 'banned', bannedUntilMs: now + 5_000 });
    now += 60_000;
    expect(storage.hit('ip', windows, policy).outcome).toBe('admitted');
  });

  it('peeks without counting', () => {
    storage.hit('k', windows, NEVER);
    expect(storage.peek('k', windows).map((w) => w.count)).toEqual([1, 1]);
    expect(storage.peek('k', windows).map((w) => w.count)).toEqual([1, 1]);
  });

  it('stays bounded under a flood of distinct anonymous trackers', () => {
    for (let i = 0; i < 150_000; i++) storage.hit(`ip:${i}`, windows, NEVER);
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

    it("keeps a key's windows and rejections through a flood of anonymous trackers", () => {
      for (let i = 0; i < 10; i++) storage.hit(keyTracker('fam'), keyWindows, banAfter2);
      expect(storage.hit(keyTracker('fam'), keyWindows, banAfter2).outcome).toBe('rejected');
      for (let i = 0; i < 10_000; i++) storage.hit(`ip:10.0.${i >> 8}.${i & 255}`, windows, NEVER);
      expect(storage.peek(keyTracker('fam'), keyWindows).map((w) => w.count)).toEqual([10, 10]);
      // The rejection before the flood still counts toward the ban.
      expect(storage.hit(keyTracker('fam'), keyWindows, banAfter2).outcome).toBe('rejected');
      expect(storage.hit(keyTracker('fam'), keyWindows, banAfter2).outcome).toBe('ban');
    });

    it('pushes out the least recently seen anonymous trackers only', () => {
      storage.hit('ip:first', windows, NEVER);
      for (let i = 0; i < 100; i++) storage.hit(`ip:${i}`, windows, NEVER);
      expect(storage.peek('ip:first', windows).map((w) => w.count)).toEqual([0, 0]);
      expect(storage.peek('ip:99', windows).map((w) => w.count)).toEqual([1, 1]);
    });

    it('drops the trackers of keys whose windows have all reset, keeping the others', () => {
      const keys = (storage as unknown as { keys: Map<string, unknown> }).keys;
      storage.hit(keyTracker('busy'), keyWindows, NEVER);
      for (let i = 0; i < 2_000; i++) {
        storage.hit(keyTracker(`k${i}`), [{ name: 'minute', limit: 5, ttlMs: 60_000 }], NEVER);
      }
      now += 60_000;
      for (let i = 0; i < 2_000; i++) {
        storage.hit(keyTracker(`later${i}`), keyWindows, NEVER);
      }
      expect(keys.size).toBeLessThan(4_001);
      expect(storage.peek(keyTracker('busy'), keyWindows).map((w) => w.count)).toEqual([0, 1]);
    });
  });
});
