import { Agent, request } from 'node:http';
import { withClient } from '../test/setup/clusters';
export { seedPageOrders } from '../test/support/page-orders';
import { encodeCursor, type OrderPosition } from '../src/orders/pages/order-cursor';
import { parseOrderPageQuery } from '../src/orders/pages/order-page-query';

/** A shape of v2 page, as the issue lists them. */
export interface PageShape {
  name: string;
  query: string;
}

export const PAGE_SHAPES: PageShape[] = [
  { name: 'no filter', query: '' },
  { name: 'status=pending', query: 'status=pending' },
  { name: 'petId=42', query: 'petId=42' },
  { name: 'complete=false', query: 'complete=false' },
  {
    name: 'shipDate range',
    query: 'shipDateFrom=2026-01-01T00:00:00Z&shipDateTo=2028-01-01T00:00:00Z',
  },
  { name: 'sort=-shipDate', query: 'sort=-shipDate' },
  { name: 'status=pending&sort=shipDate', query: 'status=pending&sort=shipDate' },
];

export interface PageDepthResult {
  shape: PageShape;
  firstP50Ms: number;
  deepP50Ms: number;
  /** Deep page p50 over page 1 p50. */
  ratio: number;
}

/** The table's position the deep pages start after. */
export const DEEP_POSITION = 900_000;
export const PAGE_LIMIT = 100;
const SAMPLES = 200;
const WARMUP = 20;

const ORDER_BY: Record<string, string> = {
  id: 'id',
  '-id': 'id DESC',
  shipDate: 'ship_date ASC NULLS LAST, id ASC',
  '-shipDate': 'ship_date DESC NULLS LAST, id DESC',
};

/** The deployment's cursor secret, as the service reads it (the bench sets no CURSOR_SECRET). */
export const cursorKey = (databaseUrl: string): Promise<Buffer> =>
  withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ secret: Buffer }>('SELECT secret FROM order_cursor_secret');
    return rows[0].secret;
  });

/**
 * The cursor of the page after the table's DEEP_POSITION-th order in the shape's sort, as the
 * service would have issued it for that shape (for a filtered shape, the page starts there and
 * holds the matching orders after it).
 */
async function deepCursor(databaseUrl: string, query: string): Promise<string> {
  const { filter, sort } = parseOrderPageQuery(query);
  const position = await withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ id: string; ship_key: string | null }>(
      `SELECT id::text,
              to_char(ship_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ship_key
         FROM orders ORDER BY ${ORDER_BY[sort]} OFFSET $1 LIMIT 1`,
      [DEEP_POSITION - 1],
    );
    const row = rows.at(0);
    if (!row) throw new Error(`fewer than ${DEEP_POSITION} orders in the table`);
    return { id: row.id, shipDate: row.ship_key } satisfies OrderPosition;
  });
  return encodeCursor(await cursorKey(databaseUrl), filter, sort, position);
}

/** One GET on a keep-alive connection: its latency in ms, and the page's order count. */
export function timedGet(
  url: string,
  headers: Record<string, string>,
  agent: Agent,
): Promise<{ ms: number; orders: number }> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const req = request(url, { headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const ms = Number(process.hrtime.bigint() - start) / 1e6;
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) {
          reject(new Error(`GET ${url}: ${String(res.statusCode)} ${body.slice(0, 200)}`));
          return;
        }
        resolve({ ms, orders: (JSON.parse(body) as { data: unknown[] }).data.length });
      });
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${url}: no answer within 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

/**
 * For each shape, p50 latency of page 1 and of the page after the DEEP_POSITION-th order, with
 * `limit=100`: one request at a time on one keep-alive connection, page 1 and deep page taking
 * turns, so that a drift in the machine's speed weighs on both alike. Every deep page must hold
 * orders, or it would measure nothing.
 */
export async function measurePageDepth(
  serviceUrl: string,
  headers: Record<string, string>,
  databaseUrl: string,
): Promise<PageDepthResult[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const results: PageDepthResult[] = [];
  try {
    for (const shape of PAGE_SHAPES) {
      const base = `${serviceUrl}/v2/store/orders?limit=${PAGE_LIMIT}`;
      const first = shape.query ? `${base}&${shape.query}` : base;
      const deep = `${first}&cursor=${await deepCursor(databaseUrl, shape.query)}`;
      const firstMs: number[] = [];
      const deepMs: number[] = [];
      for (let i = 0; i < WARMUP + SAMPLES; i++) {
        const a = await timedGet(first, headers, agent);
        const b = await timedGet(deep, headers, agent);
        if (b.orders === 0) throw new Error(`${shape.name}: the deep page is empty`);
        if (i >= WARMUP) {
          firstMs.push(a.ms);
          deepMs.push(b.ms);
        }
      }
      const firstP50Ms = median(firstMs);
      const deepP50Ms = median(deepMs);
      results.push({ shape, firstP50Ms, deepP50Ms, ratio: deepP50Ms / firstP50Ms });
    }
  } finally {
    agent.destroy();
  }
  return results;
}
