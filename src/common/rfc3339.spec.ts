import { parseRfc3339 } from './rfc3339';

describe('parseRfc3339', () => {
  it.each([
    ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.000000Z'],
    ['2026-11-22t10:00:00.1234567z', '2026-11-22T10:00:00.123456Z'],
    ['2026-01-01T00:30:00+01:00', '2025-12-31T23:30:00.000000Z'],
    ['2024-02-29T23:00:00-05:30', '2024-03-01T04:30:00.000000Z'],
  ])('reads %s as %s', (text, instant) => {
    expect(parseRfc3339(text)).toBe(instant);
  });

  it.each([
    '2026-11-22T10:00:00',
    '2026-11-22',
    '2026-11-22 10:00:00Z',
    '2026-02-29T10:00:00Z',
    '2026-13-01T10:00:00Z',
    '2026-11-22T24:00:00Z',
    '2026-11-22T10:00:00+24:00',
    '0001-01-01T00:00:00+01:00',
    '9999-12-31T23:00:00-05:00',
  ])('refuses %s', (text) => {
    expect(parseRfc3339(text)).toBeUndefined();
  });

  it.each([
    ['2027-03-01 05:30:00.250+05:30', '2027-03-01T00:00:00.250000Z'],
    ['2027-03-01t00:00:00z', '2027-03-01T00:00:00.000000Z'],
  ])('with spaceSeparator, reads %s as %s', (text, instant) => {
    expect(parseRfc3339(text, { spaceSeparator: true })).toBe(instant);
  });

  it.each(['2027-03-01  00:00:00Z', '2027-02-30 00:00:00Z', '2027-03-01 00:00:00'])(
    'with spaceSeparator, still refuses %s',
    (text) => {
      expect(parseRfc3339(text, { spaceSeparator: true })).toBeUndefined();
    },
  );

  it('reads an instant that new Date() reads to the same millisecond', () => {
    const instant = parseRfc3339('2024-02-29T23:00:00.1239-05:30');
    expect(instant).toBe('2024-03-01T04:30:00.123900Z');
    expect(new Date(instant as string).toISOString()).toBe('2024-03-01T04:30:00.123Z');
  });
});
