import { Agent, request } from 'node:http';
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

/** Runs of each shape's page of 1,000 (after one unmeasured: the statistics read, the plans). */
const FULL_RUNS = 5;
export const FULL_LIMIT = 1000;
/** Walked only where at most this many orders match: the walks that should take a few pages. */
const WALK_MATCHING = 20_000;
/**
 * The slowest shapes of the sweep measured again, the runs of each then, and at most how many
 * times, while the slowest is one not measured again yet.
 */
const CONFIRM_SHAPES = 8;
const CONFIRM_RUNS = 21;
const CONFIRM_ROUNDS = 4;

export interface FullPageResult {
  query: string;
  /** Orders the shape matches in the whole table. */
  matching: number;
  p50Ms: number;
  ratio: number;
  /** Orders on the first page of 1,000. */
  orders: number;
  /** Requests to walk every page; undefined where more than WALK_MATCHING match. */
  requests?: number;
  /** Measured again over CONFIRM_RUNS runs (one of the slowest of the sweep). */
  confirmed?: boolean;
}

export interface FullPagesResult {
  baselineP50Ms: number;
  pages: FullPageResult[];
}

export const CONFIRMED = { shapes: CONFIRM_SHAPES, runs: CONFIRM_RUNS };

/** The SQL condition of a shape's filters, to count what it matches. */
function matchingWhere(query: string): { where: string; values: unknown[] } {
  const { filter } = parseOrderPageQuery(query);
  const values: unknown[] = [];
  const where: string[] = ['true'];
  const add = (condition: string, value: unknown): void => {
    values.push(value);
    where.push(condition.replace('?', `$${values.length}`));
  };
  if (filter.statuses) add('status = ANY(?::text[])', filter.statuses);
  if (filter.petId !== undefined) add('pet_id = ?::int8', filter.petId);
  if (filter.complete !== undefined) add('complete = ?', filter.complete);
  if (filter.shipDateFrom !== undefined) add('ship_date >= ?::timestamptz', filter.shipDateFrom);
  if (filter.shipDateTo !== undefined) add('ship_date < ?::timestamptz', filter.shipDateTo);
  return { where: where.join(' AND '), values };
}

/** GETs every page of `url` one after the other; how many requests until `hasMore` is false. */
async function walk(
  url: string,
  headers: Record<string, string>,
  agent: Agent,
  most: number,
): Promise<number> {
  let requests = 0;
  let next: string | undefined = url;
  while (next !== undefined && requests < most) {
    const page = await fetchPage(next, headers, agent);
    requests++;
    next = page.nextCursor === undefined ? undefined : `${url}&cursor=${page.nextCursor}`;
  }
  return requests;
}

function fetchPage(
  url: string,
  headers: Record<string, string>,
  agent: Agent,
): Promise<{ nextCursor?: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) reject(new Error(`GET ${url}: ${String(res.statusCode)}`));
        else resolve(JSON.parse(body) as { nextCursor?: string });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Every shape of ORDER_SHAPES with pages of 1,000: the first page's p50 over FULL_RUNS runs (one
 * unmeasured first), each run followed by the unfiltered page of 1,000, the yardstick; the orders
 * on it against those the shape matches; and, for a shape matching at most WALK_MATCHING orders,
 * the requests a walk of every page takes (given up at twice the fewest possible, plus one). Then
 * the CONFIRM_SHAPES slowest are measured again, CONFIRM_RUNS runs each in rounds, each run
 * followed by the unfiltered page: among 216 medians of five, the slowest are also those a burst
 * of load from elsewhere on the machine fell on. Their ratio is to the unfiltered pages of that
 * second measure, taken in the same minutes; and again for the next slowest, while the slowest
 * is one of the first measure.
 */
export async function measureFullPages(
  serviceUrl: string,
  headers: Record<string, string>,
  databaseUrl: string,
  log: (message: string) => void,
): Promise<FullPagesResult> {
  const counts = await withClient(databaseUrl, async (c) => {
    const matching = new Map<string, number>();
    for (const query of ORDER_SHAPES) {
      const { where, values } = matchingWhere(query);
      const { rows } = await c.query<{ n: string }>(
        `SELECT count(*) AS n FROM orders WHERE ${where}`,
        values,
      );
      matching.set(query, Number(rows[0].n));
    }
    return matching;
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const base = `${serviceUrl}/v2/store/orders?limit=${FULL_LIMIT}`;
  const baseline: number[] = [];
  const pages: FullPageResult[] = [];
  try {
    for (let i = 0; i < 10; i++) await timedGet(base, headers, agent);
    for (const query of ORDER_SHAPES) {
      const url = `${base}&${query}`;
      const matching = counts.get(query) ?? 0;
      await timedGet(url, headers, agent);
      const ms: number[] = [];
      let orders = 0;
      for (let run = 0; run < FULL_RUNS; run++) {
        const r = await timedGet(url, headers, agent);
        ms.push(r.ms);
        orders = r.orders;
        baseline.push((await timedGet(base, headers, agent)).ms);
      }
      const fewest = Math.ceil(matching / FULL_LIMIT) + 1;
      const requests =
        matching <= WALK_MATCHING ? await walk(url, headers, agent, 2 * fewest + 1) : undefined;
      pages.push({ query, matching, p50Ms: median(ms), ratio: 0, orders, requests });
    }
    for (const page of pages) page.ratio = page.p50Ms / median(baseline);
    // Until the slowest is one measured again (a few rounds at most).
    for (let round = 0; round < CONFIRM_ROUNDS; round++) {
      const slowest = [...pages].sort((a, b) => b.ratio - a.ratio);
      if (slowest[0].confirmed) break;
      const again = new Map(
        slowest
          .filter((page) => !page.confirmed)
          .slice(0, CONFIRM_SHAPES)
          .map((page) => [page, [] as number[]]),
      );
      const againBaseline: number[] = [];
      for (let run = 0; run < CONFIRM_RUNS; run++) {
        for (const [page, ms] of again) {
          ms.push((await timedGet(`${base}&${page.query}`, headers, agent)).ms);
          againBaseline.push((await timedGet(base, headers, agent)).ms);
        }
      }
      for (const [page, ms] of again) {
        page.p50Ms = median(ms);
        page.ratio = page.p50Ms / median(againBaseline);
        page.confirmed = true;
      }
    }
  } finally {
    agent.destroy();
  }
  const baselineP50Ms = median(baseline);
  log(`v2 pages of 1,000: ${pages.length} shapes, unfiltered p50 ${baselineP50Ms.toFixed(2)} ms`);
  return { baselineP50Ms, pages };
}
