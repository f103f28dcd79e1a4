import { orderPageStatement, RANGE_ROWS, SCAN_FACTOR, scanLimitOf } from './order-page.sql';

/** The statement's text, its `$n` parameters repending by the values it carries (test-only). */
function readable(filter: Parameters<typeof orderPageStatement>[0], ...rest: RestArgs): string {
  const { text, values } = orderPageStatement(filter, ...rest);
  const all = [...values, '<scan>', '<page>'];
  return text.replace(/\$(\d+)/g, (_, n: string) => JSON.stringify(all[Number(n) - 1]));
}
type RestArgs = [
  sort: Parameters<typeof orderPageStatement>[1],
  after?: { id: string; shipDate?: string | null },
];

describe('orderPageStatement', () => {
  it('examines at most SCAN_FACTOR rows per order the page may return, plus one', () => {
    expect(scanLimitOf(10)).toBe(SCAN_FACTOR * 11);
    expect(scanLimitOf(10, 7)).toBe(7 * 11);
    expect(RANGE_ROWS).toBe(scanLimitOf(1000));
  });

  it('numbers its parameters in order, the scan and page limits following them', () => {
    const { text, values } = orderPageStatement({ petId: '7', complete: true }, 'id', { id: '42' });
    expect(values).toEqual(['7', true, '42']);
    expect(text).toContain('$4');
    expect(text).toContain('$5');
    expect(text).not.toContain('$6');
  });

  it('names a statement by its shape: the same for other values, another for another shape', () => {
    const a = orderPageStatement({ petId: '1' }, 'id', undefined);
    const b = orderPageStatement({ petId: '2' }, 'id', undefined);
    const c = orderPageStatement({ petId: '1' }, '-id', undefined);
    expect(a.name).toMatch(/^orders\.page\.[0-9a-f]{16}$/);
    expect(b.name).toBe(a.name);
    expect(c.name).not.toBe(a.name);
  });

  it('returns the rows as they are when the index answers every filter', () => {
    const page = orderPageStatement({ petId: '7' }, 'id', undefined);
    expect(page.everyRowMatches).toBe(true);
    expect(readable({ petId: '7' }, 'id')).toBe(
      `SELECT id, pet_id, quantity, to_char(ship_date AT TIME ZONE 'UTC', ` +
        `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), complete, status FROM ((SELECT id, pet_id, quantity, ` +
        `ship_date, complete, status FROM orders WHERE pet_id = "7"::int8 AND true ORDER BY id ` +
        `LIMIT LEAST("<scan>"::int8, "<page>"::int8))) AS branches ` +
        `LIMIT LEAST("<scan>"::int8, "<page>"::int8)`,
    );
  });

  it('checks status and complete on the rows of a bounded scan, its last row sent too', () => {
    const page = orderPageStatement({ statuses: ['pending'], complete: false }, '-id', { id: '9' });
    expect(page.everyRowMatches).toBe(false);
    const text = readable({ statuses: ['pending'], complete: false }, '-id', { id: '9' });
    expect(text).toContain('WHERE id < "9"::int8 ORDER BY id DESC LIMIT "<scan>"');
    expect(text).toContain(`, status = "pending" AND complete = false, n = "<scan>" FROM (`);
    expect(text).toContain(
      `WHERE (status = "pending" AND complete = false) OR n = "<scan>" LIMIT "<page>"`,
    );
  });

  it('puts no condition for every status, and ANY for several', () => {
    const every = orderPageStatement(
      { statuses: ['pending', 'shipped', 'cancelled'] },
      'id',
      undefined,
    );
    expect(every.everyRowMatches).toBe(true);
    expect(readable({ statuses: ['pending', 'shipped'] }, 'id')).toContain(
      'status = ANY(["pending","shipped"]::text[])',
    );
  });

  it('checks a ship-date range outside the scan when sorted by id', () => {
    const text = readable({ shipDateFrom: '2026-01-01T00:00:00Z' }, 'id');
    expect(text).toContain('WHERE true ORDER BY id');
    expect(text).toContain('ship_date >= "2026-01-01T00:00:00Z"::timestamptz, n =');
  });

  it('reads dated orders, then undated ones, when sorted by ship date without a range', () => {
    const text = readable({}, 'shipDate');
    expect(text).toContain(
      'WHERE ship_date IS NOT NULL ORDER BY ship_date, id LIMIT LEAST("<scan>"::int8, "<page>"::int8)) UNION ALL (',
    );
    expect(text).toContain('WHERE ship_date IS NULL ORDER BY ship_date, id');
  });

  it('reads no undated order when a ship-date range is given, and bounds the scan with it', () => {
    const text = readable(
      { shipDateFrom: '2026-01-01T00:00:00Z', shipDateTo: '2026-02-01T00:00:00Z' },
      'shipDate',
    );
    expect(text).not.toContain('UNION ALL');
    expect(text).toContain(
      'WHERE ship_date IS NOT NULL AND ship_date >= "2026-01-01T00:00:00Z"::timestamptz AND ' +
        'ship_date < "2026-02-01T00:00:00Z"::timestamptz ORDER BY ship_date, id',
    );
  });

  it('starts a deep page at the cursor, the range bound on its side checked on the rows', () => {
    const after = { id: '5', shipDate: '2026-01-10T00:00:00.000000Z' };
    const text = readable({ shipDateFrom: '2026-01-01T00:00:00Z' }, 'shipDate', after);
    expect(text).toContain(
      'WHERE ship_date IS NOT NULL AND (ship_date, id) > ' +
        '("2026-01-10T00:00:00.000000Z"::timestamptz, "5"::int8) ORDER BY ship_date, id',
    );
    expect(text).toContain('ship_date >= "2026-01-01T00:00:00Z"::timestamptz, n =');
  });

  it('reads backwards from a cursor without bounding it by NULLs, descending', () => {
    const after = { id: '5', shipDate: '2026-01-10T00:00:00.000000Z' };
    const text = readable({}, '-shipDate', after);
    expect(text).toContain(
      'WHERE (ship_date, id) < ("2026-01-10T00:00:00.000000Z"::timestamptz, "5"::int8) ' +
        'ORDER BY ship_date DESC NULLS FIRST, id DESC',
    );
  });

  it('reads only undated orders after a cursor past the dated ones', () => {
    const text = readable({ petId: '3' }, 'shipDate', { id: '8', shipDate: null });
    expect(text).not.toContain('UNION ALL');
    expect(text).toContain(
      'WHERE pet_id = "3"::int8 AND ship_date IS NULL AND id > "8"::int8 ORDER BY ship_date, id',
    );
  });

  it('sorted by id within a ship-date range, reads the range by its index when it is narrow', () => {
    const filter = {
      statuses: ['cancelled' as const],
      shipDateFrom: '2026-01-01T00:00:00Z',
      shipDateTo: '2026-01-02T00:00:00Z',
    };
    const text = readable(filter, '-id', { id: '8' });
    const range =
      'ship_date >= "2026-01-01T00:00:00Z"::timestamptz AND ship_date < "2026-01-02T00:00:00Z"::timestamptz';
    // The range's entries counted, at most scanLimitOf(limit) + 1, and only the count kept.
    const counted =
      'WITH range AS MATERIALIZED (SELECT count(*) <= 4 * "<page>"::int8 AS narrow FROM (' +
      `SELECT FROM orders WHERE ${range} ORDER BY ship_date LIMIT 4 * "<page>"::int8 + 1) AS entries) `;
    expect(text.slice(0, counted.length)).toBe(counted);
    // Narrow: the range's rows through the same index, then those after the cursor by id, with
    // no copy of them between.
    expect(text).toContain(
      'FROM (SELECT * FROM (SELECT id, pet_id, quantity, ship_date, complete, status FROM orders ' +
        `WHERE ${range} AND (SELECT narrow FROM range) ORDER BY ship_date LIMIT 4 * "<page>"::int8) ` +
        'AS in_range WHERE id < "8"::int8 AND status = "cancelled" ORDER BY id DESC LIMIT "<page>"',
    );
    expect(text.match(/ AS MATERIALIZED /g)).toHaveLength(1);
    // Wide: the bounded walk of the ids, every filter checked on its rows.
    expect(text).toContain('WHERE id < "8"::int8 ORDER BY id DESC LIMIT "<scan>"');
    expect(text).toMatch(
      / OR n = "<scan>"\) AND NOT \(SELECT narrow FROM range\) LIMIT "<page>"\)$/,
    );
    expect(orderPageStatement(filter, '-id', { id: '8' }).everyRowMatches).toBe(false);
  });

  it('reads no range first where an index serves the range in the sort, or there is none', () => {
    const range = { shipDateFrom: '2026-01-01T00:00:00Z' };
    expect(readable(range, 'shipDate')).not.toContain('WITH range');
    expect(readable({ petId: '3' }, 'id')).not.toContain('WITH range');
    // A pet's orders in a range: the walk of the pet's own ids, cheaper a row than lookups by id.
    expect(readable({ petId: '3', ...range }, 'id')).not.toContain('WITH range');
    expect(readable(range, 'id')).toContain('WITH range');
  });
});
