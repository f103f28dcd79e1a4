import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { api } from './support/client';
import { eventually } from './support/eventually';
import { createTestApp, TestApp } from './support/test-app';
import { pgPoolOf } from '../src/database/pg-pool';

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
    const appPool = pgPoolOf(t.app.get(DataSource));
    if (!appPool) throw new Error('the app has no database pool');
    pool = appPool;
    await t.db.query(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
       SELECT g, g * 7, g % 5, timestamptz '2026-11-22T10:00:00Z' + g * interval '1 second',
              g % 2 = 0, (ARRAY['pending','shipped','cancelled'])[g % 3 + 1]
         FROM generate_series(1, ${ORDERS}) AS g`,
    );
  });
  afterAll(() => t.close());

  it('releases the cursor and its connection as soon as the client goes away mid-list', async () => {
    const list = await openList(t, port);
    expect(list.first.startsWith('[{"id":1,')).toBe(true);
    // Mid-list, the cursor's query holds a connection: what must be given back. The first rows
    // are sent before the cursor is opened (a connection taken from the pool, then the query), so
    // on a busy machine it may reach PostgreSQL a moment after the first chunk reaches us.
    await eventually(listBackends, (backends) => backends.length === 1, 5_000);
    expect(pool.totalCount - pool.idleCount).toBeGreaterThanOrEqual(1);

    list.req.destroy();

    await eventually(poolState, poolIsWhole, 5_000);
    await eventually(listBackends, (backends) => backends.length === 0, 5_000);
  });

  it('cuts the connection, never ending the JSON, when the database fails mid-list', async () => {
    const list = await openList(t, port);
    const [backend] = await eventually(listBackends, (b) => b.length === 1, 5_000);
    await t.db.query('SELECT pg_terminate_backend($1)', [backend.pid]);

    const { ended, body } = await readToEnd(list);

    expect(ended).toBe(false);
    expect(body.startsWith('[{"id":1,')).toBe(true);
    expect(body.endsWith(']')).toBe(false);
    expect(isJson(body)).toBe(false);
    // The broken connection was dropped from the pool, and the app goes on serving lists.
    await eventually(poolState, poolIsWhole, 5_000);
    const next = await api(t).get('/v1/store/orders').expect(200);
    expect((next.body as unknown[]).length).toBe(ORDERS);
  });
});
