import { bindingWindow } from './rate-limit.service';

describe('bindingWindow', () => {
  const minute = { name: 'minute', limit: 100, count: 10, resetAtMs: 60_000 };
  const day = { name: 'day', limit: 3, count: 1, resetAtMs: 86_400_000 };

  it('is the window with the fewest requests remaining', () => {
    expect(bindingWindow([minute, day])).toBe(day);
    expect(bindingWindow([{ ...minute, count: 99 }, day]).name).toBe('minute');
  });

  it('on a tie, is the window that resets later', () => {
    expect(bindingWindow([{ ...minute, count: 98 }, day]).name).toBe('day');
    expect(
      bindingWindow([
        { ...minute, count: 100 },
        { ...day, count: 3 },
      ]).name,
    ).toBe('day');
  });
});
