import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { api } from './support/client';
import { eventually } from './support/eventually';
import { createTestApp, TestApp } from './support/test-app';
import { APPLICATION_NAME } from '../src/database/data-source-options';
import { pgPoolOf } from '../src/platform/pg-pool';

/** Enough rows that the list is still streaming (the kernel buffers a few MB) when we act. */
const ORDERS = 200_000;

/** Backends of the app's database still running the list query (idle ones are pooled, done). */
const LIST_BACKENDS_SQL = `
  SELECT pid, state FROM pg_stat_activity
   WHERE datname = current_database() AND pid <> pg_backend_pid()
     AND query LIKE '%FROM orders%ORDER BY id%' AND state <> 'idle'`;

interface Backend {
  pid: number;
  state: string;
}

interface PoolState {
  total: number;
  idle: number;
  waiting: number;
}

interface OpenList {
  req: ClientRequest;
  res: IncomingMessage;
  first: string;
}

/**
 * GET of the list over a socket of its own (node:http, no agent), resolved once the first chunk
 * of the body has arrived. The response is left paused there: the server is held by
 * back-pressure mid-list, with its cursor open.
 */
function openList(t: TestApp, port: number): Promise<OpenList> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/store/orders',
        headers: { Authorization: `Bearer ${t.key}` },
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`list answered ${String(res.statusCode)}`));
          return;
        }
        res.once('data', (chunk: Buffer) => {
          res.pause();
          clearTimeout(timer);
          resolve({ req, res, first: chunk.toString('utf8') });
        });
      },
    );
    const timer = setTimeout(() => req.destroy(new Error('no first chunk within 20 s')), 20_000);
    req.on('error', reject);
    req.end();
  });
}

/**
 * Reads the rest of a response: whether it ended properly or was cut off by the server, and the
 * whole body received. A response that does neither within 20 s fails (a hung list).
 */
function readToEnd(list: OpenList): Promise<{ ended: boolean; body: string }> {
  return new Promise((resolve, reject) => {
    const chunks = [list.first];
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      list.req.destroy();
      reject(new Error(`the response neither ended nor was cut off within 20 s`));
    }, 20_000);
    const settle = (ended: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ended, body: chunks.join('') });
    };
    list.res.setEncoding('utf8');
    list.res.on('data', (chunk: string) => chunks.push(chunk));
    list.res.on('end', () => settle(true));
    list.res.on('aborted', () => settle(false));
    list.res.on('error', () => settle(false));
    list.req.on('error', () => settle(false));
    list.res.on('close', () => settle(list.res.complete));
    list.res.resume();
  });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('streaming the order list', () => {
  let t: TestApp;
  let port: number;
  let pool: Pool;

  const listBackends = async (): Promise<Backend[]> =>
    (await t.db.query<Backend>(LIST_BACKENDS_SQL)).rows;
  const poolState = (): Promise<PoolState> =>
    Promise.resolve({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  /** Every connection the app's pool holds is back in it, and nothing waits for one. */
  const poolIsWhole = (s: PoolState): boolean => s.total === s.idle && s.waiting === 0;

  beforeAll(async () => {
    t = await createTestApp();
    // A real listener, so a client can open its own socket and drop it (supertest reuses it).
    await new Promise<void>((resolve) => t.http.listen(0, '127.0.0.1', resolve));
    port = (t.http.address() as AddressInfo).port;
    pool = pgPoolOf(t.app.get(DataSource));
    await t.db.query(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
       SELECT g, g * 7, g % 5, timestamptz '2026-11-22T10:00:00Z' + g * interval '1 second',
              g % 2 = 0, (ARRAY['pending','shipped','cancelled'])[g % 3 + 1]
         FROM generate_series(1, ${ORDERS}) AS g`,
    );
  });
  afterAll(() => t.close());

  /**
   * Resolves once the server has stopped reading batches for the paused client (the kernel's
   * buffers are full and the list waits on the client): no connection taken for a second.
   */
  const serverWaitsOnClient = async (): Promise<void> => {
    let acquired = 0;
    const count = (): void => {
      acquired++;
    };
    pool.on('acquire', count);
    try {
      for (const deadline = Date.now() + 20_000; ;) {
        const before = acquired;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        if (acquired === before) return;
        if (Date.now() > deadline) throw new Error('the server still reads batches after 20 s');
      }
    } finally {
      pool.removeListener('acquire', count);
    }
  };

  it('holds no connection while its client stalls mid-list, and none once the client goes away', async () => {
    const list = await openList(t, port);
    expect(list.first.startsWith('[{"id":1,')).toBe(true);
    await serverWaitsOnClient();
    // Mid-list, waiting on the client: every batch is a statement of its own, already over.
    expect(poolIsWhole(await poolState())).toBe(true);
    expect(await listBackends()).toEqual([]);

    list.req.destroy();

    await eventually(poolState, poolIsWhole, 5_000);
    await eventually(listBackends, (backends) => backends.length === 0, 5_000);
  });

  it('cuts the connection, never ending the JSON, when the database fails mid-list', async () => {
    const list = await openList(t, port);
    await serverWaitsOnClient();
    // The next batch the client's reading asks for fails (42P01).
    await t.db.query('ALTER TABLE orders RENAME TO orders_away');
    let result: { ended: boolean; body: string };
    try {
      result = await readToEnd(list);
    } finally {
      await t.db.query('ALTER TABLE orders_away RENAME TO orders');
    }
    const { ended, body } = result;

    expect(ended).toBe(false);
    expect(body.startsWith('[{"id":1,')).toBe(true);
    expect(body.endsWith(']')).toBe(false);
    expect(isJson(body)).toBe(false);
    // Nothing is left held, and the app goes on serving lists.
    await eventually(poolState, poolIsWhole, 5_000);
    const next = await api(t).get('/v1/store/orders').expect(200);
    expect((next.body as unknown[]).length).toBe(ORDERS);
  });

  it("goes on, whole, when the pool's connections are lost while the client stalls mid-list", async () => {
    const list = await openList(t, port);
    await serverWaitsOnClient();
    await t.db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = $1`,
      [APPLICATION_NAME],
    );

    const { ended, body } = await readToEnd(list);

    expect(ended).toBe(true);
    const orders = JSON.parse(body) as { id: number }[];
    expect(orders).toHaveLength(ORDERS);
    expect(orders[ORDERS - 1].id).toBe(ORDERS);
  });
});
