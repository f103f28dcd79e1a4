import { ORDER_STATUSES } from '../order-status';
import type { OrderFilter } from './order-page-query';
import { SCAN_FACTOR } from './order-page.sql';

/**
 * The share of the orders that each value of `status` and of `complete` holds, as PostgreSQL's
 * statistics last measured them (`pg_stats`, kept by ANALYZE and autovacuum). A value missing
 * from a column's map is rarer than any it lists.
 */
export interface FilterFractions {
  status: ReadonlyMap<string, number>;
  complete: ReadonlyMap<string, number>;
}

/** The most a page examines per order it may return, however sparse its filter. */
export const MAX_SCAN_FACTOR = 5;

/**
 * How many times `limit + 1` matching orders a page's scan should be able to meet, by the
 * estimate: a margin over the mean, so that a page is full but for a rare run of bad luck.
 */
const FILL_MARGIN = 1.2;

/**
 * How many orders a page may examine per order it may return (`scanLimitOf`), for a filter on
 * status or complete that no index serves: enough for the matches the statistics promise to fill
 * the page, between SCAN_FACTOR and MAX_SCAN_FACTOR. Where even the most would leave the page
 * short, or nothing is known, SCAN_FACTOR: more work would buy no full page. Two filters together
 * are taken to be independent, as PostgreSQL's planner takes them: where they are not (a
 * cancelled order is never complete), a page of both may be short, or examine more than it finds.
 */
export function scanFactorOf(filter: OrderFilter, fractions: FilterFractions | undefined): number {
  if (fractions === undefined) return SCAN_FACTOR;
  let fraction = 1;
  const { statuses } = filter;
  if (statuses && statuses.length < ORDER_STATUSES.length && fractions.status.size > 0) {
    fraction *= statuses.reduce((sum, status) => sum + (fractions.status.get(status) ?? 0), 0);
  }
  if (filter.complete !== undefined && fractions.complete.size > 0) {
    fraction *= fractions.complete.get(String(filter.complete)) ?? 0;
  }
  for (let factor = SCAN_FACTOR; factor <= MAX_SCAN_FACTOR; factor++) {
    if (factor * fraction >= FILL_MARGIN) return factor;
  }
  return SCAN_FACTOR;
}

/** A row of the filters' statistics (`FILTER_STATISTICS_SQL`, order-page.sql.ts). */
export interface FilterStatisticsRow {
  column: string;
  values: string | null;
  shares: number[] | null;
}

/** The statistics' rows as shares; undefined when there are none (the table was never analysed). */
export function filterFractionsOf(rows: FilterStatisticsRow[]): FilterFractions | undefined {
  return rows.length === 0 ? undefined : fractionsOf(rows);
}

/** `pg_stats`' most common values, as text (`{pending,shipped}`, `{f,t}`), into their shares. */
export function fractionsOf(rows: FilterStatisticsRow[]): FilterFractions {
  const read = (column: string, name: (value: string) => string): Map<string, number> => {
    const row = rows.find((r) => r.column === column);
    const shares = new Map<string, number>();
    if (!row?.values || !row.shares) return shares;
    const values = row.values.replace(/^\{|\}$/g, '').split(',');
    values.forEach((value, i) =>
      shares.set(name(value.replace(/^"|"$/g, '')), row.shares?.[i] ?? 0),
    );
    return shares;
  };
  return {
    status: read('status', (value) => value),
    complete: read('complete', (value) => String(value === 't')),
  };
}
