const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1_000],
];

const format = new Intl.RelativeTimeFormat('en', { numeric: 'always' });

/**
 * A time as people say it, relative to now: "3 minutes ago", "in 90 days": the largest unit that
 * fits, rounded to the nearest whole one (a key made with --expires-in 2h expires "in 2 hours",
 * not "in 1 hour", a second later).
 */
export function relativeTime(at: Date, now = Date.now()): string {
  const ms = at.getTime() - now;
  const abs = Math.abs(ms);
  if (abs < 1_000) return 'just now';
  const [unit, size] = UNITS.find(([, size]) => abs >= size) ?? UNITS[UNITS.length - 1];
  const amount = Math.round(abs / size);
  return format.format(ms < 0 ? -amount : amount, unit);
}
