import { BudgetLeases, LEASE_MS, LeaseReturn } from './budget-leases';
import { WindowSpec, WindowState } from './rate-limit.storage';

const specs: WindowSpec[] = [
  { name: 'minute', limit: 10_000, ttlMs: 60_000 },
  { name: 'day', limit: 100_000, ttlMs: 86_400_000 },
];

/** The windows as Redis counted them: `count` requests in each, leased ones included. */
function counted(now: number, count: number): WindowState[] {
  return specs.map((w) => ({ name: w.name, limit: w.limit, count, resetAtMs: now + w.ttlMs }));
}

describe('BudgetLeases', () => {
  let now: number;
  let leases: BudgetLeases;
  let returned: LeaseReturn[];
  const keep = (back: LeaseReturn): void => void returned.push(back);

  beforeEach(() => {
    now = 1_000_000;
    leases = new BudgetLeases(() => now);
    returned = [];
  });

  it('asks for a lease only for a tracker seen within the lease period, one request at a time', () => {
    expect(leases.wants('key:a')).toBe(false);
    expect(leases.wants('key:a')).toBe(true);
    // Asked already, not answered yet: the next request does not ask too.
    expect(leases.wants('key:a')).toBe(false);
    leases.grant('key:a', specs, counted(now, 12), 0, keep);
    expect(leases.wants('key:a')).toBe(true);
    now += LEASE_MS;
    leases.grant('key:a', specs, counted(now, 13), 0, keep);
    expect(leases.wants('key:a')).toBe(false);
  });

  it('admits the leased requests with the counts Redis would have given them, then no more', () => {
    leases.wants('key:a');
    leases.wants('key:a');
    // The request that took the lease counted as the 11th; 3 more are leased (14 in Redis).
    leases.grant('key:a', specs, counted(now, 14), 3, keep);
    const counts = [1, 2, 3].map(() => leases.take('key:a', specs, keep)?.[0].count);
    expect(counts).toEqual([12, 13, 14]);
    expect(leases.take('key:a', specs, keep)).toBeUndefined();
    expect(returned).toEqual([]);
  });

  it('gives a lapsed lease up and hands its unused requests back, to the windows it knew', () => {
    leases.grant('key:a', specs, counted(now, 14), 3, keep);
    leases.take('key:a', specs, keep);
    now += LEASE_MS;
    expect(leases.take('key:a', specs, keep)).toBeUndefined();
    expect(returned).toEqual([
      { tracker: 'key:a', unused: 2, windows: counted(now - LEASE_MS, 14) },
    ]);
  });

  it('never uses a lease for other limits (a plan changed)', () => {
    leases.grant('key:a', specs, counted(now, 14), 3, keep);
    const changed = specs.map((w) => ({ ...w, limit: w.limit + 1 }));
    expect(leases.take('key:a', changed, keep)).toBeUndefined();
    expect(returned.map((r) => r.unused)).toEqual([3]);
  });

  it('ends a lease at its first window reset, whatever the lease period', () => {
    const closeToReset = counted(now, 14).map((w) => ({ ...w, resetAtMs: now + 10 }));
    leases.grant('key:a', specs, closeToReset, 3, keep);
    now += 10;
    expect(leases.take('key:a', specs, keep)).toBeUndefined();
  });

  it('adds a grant to a lease of the same windows: counts go on one by one', () => {
    leases.grant('key:a', specs, counted(now, 14), 3, keep);
    leases.take('key:a', specs, keep);
    // 2 of the 3 still held here, 5 more: Redis counts 19, of which 7 are not spent yet.
    leases.grant('key:a', specs, counted(now, 19), 5, keep);
    const counts = Array.from({ length: 7 }, () => leases.take('key:a', specs, keep)?.[0].count);
    expect(counts).toEqual([13, 14, 15, 16, 17, 18, 19]);
    expect(leases.take('key:a', specs, keep)).toBeUndefined();
    expect(returned).toEqual([]);
  });

  it('replaces a lease of windows that have reset since, handing it back', () => {
    leases.grant('key:a', specs, counted(now, 14), 3, keep);
    leases.grant('key:a', specs, counted(now + 60_000, 6), 5, keep);
    expect(returned.map((r) => r.unused)).toEqual([3]);
    expect(leases.take('key:a', specs, keep)?.[0].count).toBe(2);
  });

  it('asks for a top-up once a lease is down to half of its grant, one at a time', () => {
    leases.grant('key:a', specs, counted(now, 14), 4, keep);
    leases.take('key:a', specs, keep);
    expect(leases.wantsTopUp('key:a')).toBe(false);
    leases.take('key:a', specs, keep);
    expect(leases.wantsTopUp('key:a')).toBe(true);
    expect(leases.wantsTopUp('key:a')).toBe(false);
    leases.grant('key:a', specs, counted(now, 18), 4, keep);
    expect(leases.wantsTopUp('key:a')).toBe(false);
    expect(leases.wantsTopUp('key:b')).toBe(false);
  });

  it('releases the lapsed leases, or all of them at shutdown', () => {
    leases.grant('key:a', specs, counted(now, 14), 3, keep);
    now += LEASE_MS / 2;
    leases.grant('key:b', specs, counted(now, 14), 4, keep);
    now += LEASE_MS / 2;
    expect(leases.release().map((r) => [r.tracker, r.unused])).toEqual([['key:a', 3]]);
    expect(leases.release(true).map((r) => [r.tracker, r.unused])).toEqual([['key:b', 4]]);
    expect(leases.release(true)).toEqual([]);
  });
});
