const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})([Tt ])(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

export interface Rfc3339Options {
  /**
   * Also take a space between the date and the time, as RFC 3339 §5.6 lets an application do for
   * readability (the keys tool, typed by hand); the API takes only `T`.
   */
  spaceSeparator?: boolean;
}

/**
 * An RFC 3339 date-time with an offset (`Z` or `±hh:mm`), as the instant it names, in the
 * canonical form `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds: PostgreSQL's precision; finer
 * digits are dropped; `new Date()` reads it). Canonical strings of years 0001..9999 compare like
 * the instants they name. Undefined for anything else: no offset, an impossible date or time, a
 * year that leaves 0001..9999 once in UTC.
 */
export function parseRfc3339(text: string, options: Rfc3339Options = {}): string | undefined {
  const match = DATE_TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day] = match.slice(1, 4).map(Number);
  const [hour, minute, second] = match.slice(5, 8).map(Number);
  // Groups that did not take part in the match are undefined (the types do not say so).
  const [separator, fraction, zulu] = [match[4], match[8], match[9]] as (string | undefined)[];
  const [sign, offsetHour, offsetMinute] = match.slice(10);
  if (separator === ' ' && !options.spaceSeparator) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (zulu === undefined) {
    const h = Number(offsetHour);
    const m = Number(offsetMinute);
    if (h > 23 || m > 59) return undefined;
    offsetMinutes = (sign === '-' ? -1 : 1) * (h * 60 + m);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute - offsetMinutes, second, 0);
  const utcYear = utc.getUTCFullYear();
  if (utcYear < 1 || utcYear > 9999) return undefined;
  const micros = (fraction ?? '').slice(0, 6).padEnd(6, '0');
  return `${utc.toISOString().slice(0, 19)}.${micros}Z`;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1];
}

const isLeapYear = (year: number): boolean =>
  (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
