import { relativeTime } from './relative-time';

describe('relativeTime', () => {
  const now = Date.UTC(2026, 10, 23, 12, 0, 0);
  const at = (ms: number): Date => new Date(now + ms);

  it.each([
    [-3 * 60_000 - 20_000, '3 minutes ago'],
    [90 * 86_400_000 - 5_000, 'in 90 days'],
    [89 * 86_400_000 + 3_600_000, 'in 89 days'],
    [-1 * 60_000, '1 minute ago'],
    [-59_000, '59 seconds ago'],
    [2 * 3_600_000 - 12_000, 'in 2 hours'],
    [2 * 3_600_000 + 31 * 60_000, 'in 3 hours'],
    [-400 * 86_400_000, '1 year ago'],
    [-200, 'just now'],
  ])('says %p ms from now as %p', (ms, text) => {
    expect(relativeTime(at(ms), now)).toBe(text);
  });
});
