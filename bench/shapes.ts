import { Agent } from 'node:http';
import { withClient } from '../test/setup/clusters';
import { explainPage, nodesOf, type PlanNode } from '../test/support/page-plans';
import { ORDER_SHAPES } from '../test/support/page-shapes';
import { encodeCursor, type OrderPosition } from '../src/orders/pages/order-cursor';
import { parseOrderPageQuery } from '../src/orders/pages/order-page-query';
import { Client } from 'pg';
import { cursorKey, median, timedGet } from './pages';

/** Runs of each shape (more than five: a prepared statement's plan may change after five). */
const RUNS = 9;
const LIMIT = 100;
/** At most: a shape's p50 ÷ the unfiltered page 1's p50. */
export const SHAPE_TARGET = 3;

export interface ShapeResult {
  query: string;
  page: 'page 1' | 'deep';
  p50Ms: number;
  ratio: number;
  orders: number;
}

export interface ShapesResult {
  baselineP50Ms: number;
  shapes: ShapeResult[];
  worst: (ShapeResult & { plan: string; examined: number })[];
}

/** Per sort, the position of the order at 90 % of the table in that sort. */
async function deepPositions(databaseUrl: string): Promise<Map<string, OrderPosition>> {
  const orderBy: Record<string, string> = {
    id: 'id',
    '-id': 'id DESC',
    shipDate: 'ship_date ASC NULLS LAST, id',
    '-shipDate': 'ship_date DESC NULLS LAST, id DESC',
  };
  return withClient(databaseUrl, async (c) => {
    const { rows: count } = await c.query<{ n: string }>('SELECT count(*) AS n FROM orders');
    const positions = new Map<string, OrderPosition>();
    for (const [sort, order] of Object.entries(orderBy)) {
      const { rows } = await c.query<{ id: string; ship: string | null }>(
        `SELECT id::text, to_char(ship_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ship
           FROM orders ORDER BY ${order} OFFSET $1 LIMIT 1`,
        [Math.floor(Number(count[0].n) * 0.9)],
      );
      positions.set(sort, {
        id: rows[0].id,
        shipDate: sort.includes('shipDate') ? rows[0].ship : undefined,
      });
    }
    return positions;
  });
}

const planLine = (plan: PlanNode): string =>
  nodesOf(plan)
    .map(
      (node) =>
        `${node['Node Type']}${node['Index Name'] ? ` (${node['Index Name']})` : ''}: ` +
        `${String(node['Actual Rows'])} rows${node['Rows Removed by Filter'] ? `, ${String(node['Rows Removed by Filter'])} removed` : ''}`,
    )
    .join(' → ');

/**
 * Every shape of ORDER_SHAPES, page 1 and the page after the order at 90 % of its sort, `RUNS`
 * times each (more than five: a prepared statement may change its plan after five), one request
 * at a time on one keep-alive connection, in rounds; each request of a shape is followed by one
 * of the unfiltered page 1, so that a drift of the machine's speed weighs on the yardstick as on
 * the shapes. Then the worst five with their plans (EXPLAIN ANALYZE, custom).
 */
export async function measureShapes(
  serviceUrl: string,
  headers: Record<string, string>,
  databaseUrl: string,
  log: (message: string) => void,
): Promise<ShapesResult> {
  const key = await cursorKey(databaseUrl);
  const deep = await deepPositions(databaseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const base = `${serviceUrl}/v2/store/orders?limit=${LIMIT}`;
  const baseline: number[] = [];
  const measured = ORDER_SHAPES.flatMap((query) => {
    const { filter, sort } = parseOrderPageQuery(query);
    const after = deep.get(sort);
    const cursor = after ? encodeCursor(key, filter, sort, after) : '';
    return (['page 1', 'deep'] as const).map((page) => ({
      query,
      page,
      url: `${base}&${query}${page === 'deep' ? `&cursor=${cursor}` : ''}`,
      after: page === 'deep' ? after : undefined,
      ms: [] as number[],
      orders: 0,
    }));
  });
  try {
    for (let i = 0; i < 50; i++) await timedGet(base, headers, agent);
    // Rounds: every shape once per round, each followed by the unfiltered page 1. A burst of
    // load from elsewhere on the machine then falls on one run of many shapes, not on all the
    // runs of one.
    for (let round = 0; round < RUNS; round++) {
      for (const shape of measured) {
        const r = await timedGet(shape.url, headers, agent);
        shape.ms.push(r.ms);
        shape.orders = r.orders;
        baseline.push((await timedGet(base, headers, agent)).ms);
      }
    }
  } finally {
    agent.destroy();
  }
  const baselineP50Ms = median(baseline);
  const shapes = measured.map((m) => ({
    query: m.query,
    page: m.page,
    p50Ms: median(m.ms),
    ratio: median(m.ms) / baselineP50Ms,
    orders: m.orders,
  }));
  log(`v2 shapes: ${shapes.length} measured, unfiltered page 1 p50 ${baselineP50Ms.toFixed(2)} ms`);
  const worst = [];
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    for (const shape of [...shapes].sort((a, b) => b.ratio - a.ratio).slice(0, 5)) {
      const after = measured.find((m) => m.query === shape.query && m.page === shape.page)?.after;
      const explained = await explainPage(db, shape.query, after, LIMIT, false);
      worst.push({ ...shape, plan: planLine(explained.plan), examined: explained.examined });
    }
  } finally {
    await db.end();
  }
  return { baselineP50Ms, shapes, worst };
}

/** The sweep as Markdown: a summary by shape family, the worst five with their plans. */
export function shapesReport(result: ShapesResult): string {
  const over = result.shapes.filter((s) => s.ratio > SHAPE_TARGET);
  const ratios = result.shapes.map((s) => s.ratio).sort((a, b) => a - b);
  const lines = [
    `Unfiltered page 1 (limit ${LIMIT}) p50: ${result.baselineP50Ms.toFixed(2)} ms. ` +
      `${result.shapes.length} shape pages (${ORDER_SHAPES.length} shapes × page 1 and deep), ` +
      `${RUNS} runs each: ratio to it median ${median(ratios).toFixed(2)}×, ` +
      `max ${ratios[ratios.length - 1].toFixed(2)}×; over ${SHAPE_TARGET}×: ${over.length}.`,
    '',
    '| worst shapes | page | p50 ms | ÷ unfiltered page 1 | orders on the page | rows examined | plan |',
    '|---|---|--:|--:|--:|--:|---|',
    ...result.worst.map(
      (w) =>
        `| \`${w.query}\` | ${w.page} | ${w.p50Ms.toFixed(2)} | ${w.ratio.toFixed(2)}× | ${w.orders} | ${w.examined} | ${w.plan} |`,
    ),
  ];
  return lines.join('\n');
}
