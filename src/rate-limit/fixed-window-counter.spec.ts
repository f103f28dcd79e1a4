import { FixedWindowCounter } from './fixed-window-counter';

describe('FixedWindowCounter', () => {
  let now: number;
  const counter = (limit: number): FixedWindowCounter =>
    new FixedWindowCounter(limit, 60_000, () => now);

  beforeEach(() => {
    now = 1_000_000;
  });

  it('gives at most its limit in a window, and nothing once full', () => {
    const c = counter(3);
    const taken = [c.take(), c.take(), c.take(), c.take(), c.take()];
    expect(taken).toEqual([now + 60_000, now + 60_000, now + 60_000, undefined, undefined]);
  });

  it('starts a new window at the first unit after the last one ended', () => {
    const c = counter(1);
    expect(c.take()).toBe(1_060_000);
    now += 59_999;
    expect(c.take()).toBeUndefined();
    now += 1;
    expect(c.take()).toBe(1_120_000);
    expect(c.take()).toBeUndefined();
  });

  it('takes a unit given back again, within the same window', () => {
    const c = counter(1);
    const window = c.take() as number;
    c.giveBack(window);
    expect(c.take()).toBe(window);
    expect(c.take()).toBeUndefined();
  });

  it('ignores a unit given back after its window ended: the new window owes it nothing', () => {
    const c = counter(1);
    const old = c.take() as number;
    now += 60_000;
    expect(c.take()).toBe(now + 60_000);
    c.giveBack(old);
    expect(c.take()).toBeUndefined();
  });
});
