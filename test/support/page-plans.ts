import type { Client, Pool, PoolClient } from 'pg';
import type { OrderPosition } from '../../src/orders/pages/order-cursor';
import { parseOrderPageQuery } from '../../src/orders/pages/order-page-query';
import {
  filterFractionsOf,
  type FilterStatisticsRow,
  scanFactorOf,
} from '../../src/orders/pages/order-page-estimate';
import {
  FILTER_STATISTICS_SQL,
  orderPageStatement,
  PAGE_PLANNER_SETTINGS,
  scanLimitOf,
} from '../../src/orders/pages/order-page.sql';

/** A node of EXPLAIN (ANALYZE, FORMAT JSON). */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Rows Removed by Join Filter'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

export const nodesOf = (node: PlanNode): PlanNode[] => [
  node,
  ...(node.Plans ?? []).flatMap(nodesOf),
];

const SCANS = /Scan$/;
/** Scans of rows the plan already holds: a subquery's, or a CTE's (read by a scan counted once). */
const RESCANS = new Set(['Subquery Scan', 'CTE Scan']);

/**
 * The rows a plan examined: what every scan of a table or an index read (its rows out, and those
 * its filter removed), and what every other node's filter removed.
 */
export function rowsExamined(plan: PlanNode): number {
  let rows = 0;
  for (const node of nodesOf(plan)) {
    const loops = node['Actual Loops'] ?? 1;
    const removed =
      (node['Rows Removed by Filter'] ?? 0) +
      (node['Rows Removed by Index Recheck'] ?? 0) +
      (node['Rows Removed by Join Filter'] ?? 0);
    const scanned = SCANS.test(node['Node Type']) && !RESCANS.has(node['Node Type']);
    rows += loops * (removed + (scanned ? (node['Actual Rows'] ?? 0) : 0));
  }
  return rows;
}

/**
 * How many times index scans of a plan looked a row up by its key, beyond their first: a page
 * that reads a range's orders by id descends the primary key once for each.
 */
export function lookups(plan: PlanNode): number {
  return nodesOf(plan)
    .filter((node) => /^Index (Only )?Scan$/.test(node['Node Type']))
    .reduce((sum, node) => sum + Math.max(0, (node['Actual Loops'] ?? 1) - 1), 0);
}

/** The rows the index scans of a plan returned (each read its heap tuple). */
export function rowsScanned(plan: PlanNode): number {
  return nodesOf(plan)
    .filter((node) => /^Index (Only )?Scan$/.test(node['Node Type']))
    .reduce((sum, node) => sum + (node['Actual Loops'] ?? 1) * (node['Actual Rows'] ?? 0), 0);
}

export interface PagePlan {
  plan: PlanNode;
  text: string;
  values: unknown[];
  /** Rows read by the scans and removed by filters. */
  examined: number;
  /** Rows the index scans returned. */
  scanned: number;
  /** The rows the page's walk may examine: its statement's scan limit. */
  scanLimit: number;
  /** Lookups by key beyond each index scan's first (see `lookups`). */
  lookups: number;
  /**
   * Shared buffers the execution touched: about one per row scanned (its heap page) and a few
   * index pages; far more means index entries skipped inside the index, which no row count shows.
   */
  buffers: number;
}

/**
 * Runs the page statement of `query` after `after` under EXPLAIN ANALYZE on `db`, with its plan
 * chosen as a custom plan (for these values) or as the generic plan a prepared statement may keep.
 */
export async function explainPage(
  db: Pool | PoolClient | Client,
  query: string,
  after: OrderPosition | undefined,
  limit: number,
  generic: boolean,
): Promise<PagePlan> {
  const { filter, sort } = parseOrderPageQuery(query);
  const { text, values } = orderPageStatement(filter, sort, after);
  // As the service sizes the walk: by the statistics of a status or complete filter.
  const sparse = filter.statuses !== undefined || filter.complete !== undefined;
  const fractions = sparse
    ? filterFractionsOf((await db.query<FilterStatisticsRow>(FILTER_STATISTICS_SQL)).rows)
    : undefined;
  const factor = scanFactorOf(filter, fractions);
  const scanLimit = scanLimitOf(limit, factor);
  const all = [...values, scanLimit, limit + 1];
  // Read-only, with the settings of the pages' connections, as the service runs it.
  const settings = Object.entries(PAGE_PLANNER_SETTINGS).map(
    ([name, value]) => `SET LOCAL ${name} = ${value}`,
  );
  await db.query(`BEGIN READ ONLY; ${settings.join('; ')}`);
  await db.query(
    `SET LOCAL plan_cache_mode = ${generic ? 'force_generic_plan' : 'force_custom_plan'}`,
  );
  try {
    // Through a prepared statement, as the service sends it: EXPLAIN EXECUTE shows the plan the
    // statement runs with.
    await db.query(`PREPARE page_explained AS ${text}`);
    try {
      // The values are the parser's (digits, canonical dates, statuses, booleans): no quoting.
      const literals = all.map((value) =>
        Array.isArray(value) ? `'{${value.join(',')}}'` : `'${String(value as string | number)}'`,
      );
      const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE page_explained(${literals.join(', ')})`,
      );
      const plan = rows[0]['QUERY PLAN'][0].Plan;
      return {
        plan,
        text,
        values: all,
        examined: rowsExamined(plan),
        scanned: rowsScanned(plan),
        scanLimit,
        lookups: lookups(plan),
        buffers: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0),
      };
    } finally {
      await db.query('DEALLOCATE page_explained');
    }
  } finally {
    await db.query('ROLLBACK');
  }
}
