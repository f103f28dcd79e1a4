import { connect, type Socket } from 'node:net';
import { Pool } from 'pg';
import { AppProcess } from './support/app-process';
import { buildOnce } from './support/build';
import { bearerFor } from './support/auth';
import { eventually } from './support/eventually';
import { httpRequest } from './support/http';
import { createTestDatabase } from './support/test-app';

/** The built service (`npm run build`, once per run), as `npm start` runs it. */
const START_BUILT = ['node', 'dist/main.js'];

/** Enough orders (about 22 MB of JSON) that a list outlasts what the kernel buffers for a client. */
const ORDERS = 200_000;

/**
 * The app's backends in a query of the orders or in a transaction (what a list may hold), and
 * the seconds since any of them last ran a query of the orders.
 */
const HELD_BACKENDS_SQL = `
  SELECT count(*) FILTER (
           WHERE state LIKE 'idle in transaction%' OR (state = 'active' AND query LIKE '%FROM orders%')
         )::int AS held,
         coalesce(extract(epoch FROM now() - max(state_change) FILTER (WHERE query LIKE '%FROM orders%')),
                  3600)::float AS quiet
    FROM pg_stat_activity
   WHERE datname = current_database() AND application_name = 'store-orders-service'`;

/** `GET /v1/store/orders` with `headers`, written as it is on a new TCP connection. */
function askForList(url: string, headers: Record<string, string>): Socket {
  const { hostname, port } = new URL(url);
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  const socket = connect({ host: hostname, port: Number(port) }, () => {
    socket.write(`GET /v1/store/orders HTTP/1.1\r\nHost: localhost\r\n${head.join('')}\r\n`);
  });
  return socket;
}

interface StalledReader {
  socket: Socket;
  /** The status of the answer, read from its first bytes. */
  status: number;
  /** Resumes reading: resolves with what came after the first bytes, once the server ends or cuts it. */
  readRest(): Promise<{ body: string }>;
}

/**
 * A client that asks for the list over a raw socket, reads the answer's first bytes, then reads
 * nothing more: the server is held by back-pressure once the kernel's buffers are full.
 */
function stalledReader(url: string, headers: Record<string, string>): Promise<StalledReader> {
  return new Promise((resolve, reject) => {
    const socket = askForList(url, headers);
    socket.once('error', reject);
    socket.once('data', (first: Buffer) => {
      socket.pause();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(first.toString('latin1'))?.[1] ?? 0);
      const readRest = (): Promise<{ body: string }> =>
        new Promise((done) => {
          const chunks: Buffer[] = [first];
          socket.on('data', (chunk: Buffer) => chunks.push(chunk));
          // A reset (the server cut it with data unsent) is an end as good as any.
          socket.on('error', () => undefined);
          socket.once('close', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            done({ body: text.slice(text.indexOf('\r\n\r\n') + 4) });
          });
          socket.resume();
        });
      resolve({ socket, status, readRest });
    });
  });
}

/** Reads a whole list on its own connection, stopping for `pauseMs` each time `pauseEvery` more bytes came. */
function slowReader(
  url: string,
  headers: Record<string, string>,
  pauseEvery: number,
  pauseMs: number,
): Promise<{ status: number; body: string; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = askForList(url, { ...headers, Connection: 'close' });
    const chunks: Buffer[] = [];
    let received = 0;
    let nextPause = 1;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received >= nextPause) {
        nextPause = received + pauseEvery;
        socket.pause();
        setTimeout(() => socket.resume(), pauseMs);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      // Chunked transfer encoding: the body is complete when its last (empty) chunk came.
      const complete = text.endsWith('\r\n0\r\n\r\n');
      resolve({ status, body: dechunk(rest.join('\r\n\r\n')), complete });
    });
  });
}

/**
 * Reads a whole list on its own connection at a steady `bytesPerSecond` (a slice every 100 ms) for
 * `slowForMs`, then as fast as it comes. Reading by slices of the socket's buffer keeps the rate
 * exact: the kernel's buffers on both ends then fill, and the server sees the client take the list
 * only as fast as this reads it.
 */
function steadyReader(
  url: string,
  headers: Record<string, string>,
  bytesPerSecond: number,
  slowForMs: number,
): Promise<{ status: number; body: string; complete: boolean; readSlowly: number }> {
  return new Promise((resolve, reject) => {
    const socket = askForList(url, { ...headers, Connection: 'close' });
    socket.pause();
    const chunks: Buffer[] = [];
    const startedAt = performance.now();
    let readSlowly = 0;
    const tick = setInterval(() => {
      const elapsed = performance.now() - startedAt;
      if (elapsed >= slowForMs) {
        clearInterval(tick);
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.resume();
        return;
      }
      const due = Math.floor((bytesPerSecond * elapsed) / 1000) - readSlowly;
      const size = Math.min(due, socket.readableLength);
      // read(0) only asks the socket to fill its buffer from the kernel.
      const slice = socket.read(Math.max(0, size)) as Buffer | null;
      if (slice) {
        chunks.push(slice);
        readSlowly += slice.length;
      }
    }, 100);
    socket.on('error', reject);
    socket.on('close', () => {
      clearInterval(tick);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const complete = text.endsWith('\r\n0\r\n\r\n');
      resolve({ status, body: dechunk(rest.join('\r\n\r\n')), complete, readSlowly });
    });
  });
}

/** The payload of a chunked body (as far as it came). */
function dechunk(raw: string): string {
  const parts: string[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(raw.slice(at, eol), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(raw.slice(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return parts.join('');
}

const logLines = (app: AppProcess, reqId: string): Record<string, unknown>[] =>
  app
    .json()
    .filter((l) => l.reqId === reqId || (l.req as { id?: string } | undefined)?.id === reqId);

describe('v1 list: clients that read slowly or not at all (a real process, its log captured)', () => {
  let databaseUrl: string;
  let db: Pool;
  let auth: Record<string, string>;
  /** Defaults, but a pool of 2 connections: more stalled clients than connections is easy. */
  let small: { app: AppProcess; url: string };
  /** Statements limited to 1 s, clients cut after 4 s of taking nothing. */
  let strict: { app: AppProcess; url: string };

  const heldBackends = async (): Promise<number> => (await backends()).held;
  const backends = async (): Promise<{ held: number; quiet: number }> =>
    (await db.query<{ held: number; quiet: number }>(HELD_BACKENDS_SQL)).rows[0];
  /** Once the server has stopped reading batches for its stalled clients (their buffers are full). */
  const serverWaitsOnClients = (): Promise<unknown> =>
    eventually(backends, ({ held, quiet }) => held === 0 && quiet > 1.5, 30_000);

  beforeAll(async () => {
    await buildOnce();
    databaseUrl = await createTestDatabase();
    db = new Pool({ connectionString: databaseUrl, max: 2 });
    await db.query(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
       SELECT g, g * 7, g % 5, timestamptz '2026-11-22T10:00:00Z' + g * interval '1 second',
              g % 2 = 0, (ARRAY['pending','shipped','cancelled'])[g % 3 + 1]
         FROM generate_series(1, ${ORDERS}) AS g`,
    );
    auth = await bearerFor(databaseUrl);
    const common = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', SHUTDOWN_DRAIN_DELAY_MS: '0' };
    [small, strict] = await Promise.all([
      AppProcess.start(START_BUILT, {
        ...common,
        DATABASE_POOL_SIZE: '2',
        SHUTDOWN_TIMEOUT_MS: '8000',
      }),
      AppProcess.start(START_BUILT, {
        ...common,
        DATABASE_STATEMENT_TIMEOUT_MS: '1000',
        HTTP_STALL_TIMEOUT_MS: '4000',
      }),
    ]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all([small.app.stop(), strict.app.stop()]);
    await db.end();
  });

  it('answers cancels, v2 pages, new keys and readiness while more clients than connections stall on lists', async () => {
    const stalled = await Promise.all(
      Array.from({ length: 6 }, () => stalledReader(small.url, auth)),
    );
    try {
      expect(stalled.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 200]);
      // The stalled lists hold no database connection, nor any transaction, meanwhile.
      await serverWaitsOnClients();
      const [cancel, page, unseenKey, ready] = await Promise.all([
        httpRequest(`${small.url}/v1/store/orders/3`, { method: 'DELETE', headers: auth }),
        httpRequest(`${small.url}/v2/store/orders?limit=10`, { headers: auth }),
        bearerFor(databaseUrl).then((headers) =>
          httpRequest(`${small.url}/v1/store/orders/6`, { method: 'DELETE', headers }),
        ),
        httpRequest(`${small.url}/health/ready`),
      ]);
      expect(cancel.status).toBe(204);
      expect(page.status).toBe(200);
      expect((JSON.parse(page.body) as { data: unknown[] }).data).toHaveLength(10);
      expect(unseenKey.status).toBe(204);
      expect(ready.status).toBe(200);
    } finally {
      for (const reader of stalled) reader.socket.destroy();
    }
  }, 60_000);

  it('gives a client that keeps reading the whole list, however long it takes past the statement timeout', async () => {
    // Three stops of 1.5 s: the list takes several times the 1 s statement timeout to drain.
    const { status, body, complete } = await slowReader(strict.url, auth, 6_000_000, 1500);
    expect(status).toBe(200);
    expect(complete).toBe(true);
    const orders = JSON.parse(body) as { id: number }[];
    expect(orders).toHaveLength(ORDERS);
    expect(orders[0].id).toBe(1);
    expect(orders[ORDERS - 1].id).toBe(ORDERS);
  }, 60_000);

  it('never cuts a client that reads steadily but slowly, for many stall timeouts running', async () => {
    // 128 KB/s for three and a half stall timeouts of 4 s: far less than the kernel's buffers
    // hold (megabytes on loopback), so the server's writes wait on this client all along.
    const reqId = 'steady-slow-list-1';
    const slowForMs = 14_000;
    const { status, body, complete, readSlowly } = await steadyReader(
      strict.url,
      { ...auth, 'X-Request-Id': reqId },
      128 * 1024,
      slowForMs,
    );
    expect(readSlowly).toBeGreaterThan(((128 * 1024 * slowForMs) / 1000) * 0.8);
    expect(readSlowly).toBeLessThanOrEqual((128 * 1024 * slowForMs) / 1000);
    expect(logLines(strict.app, reqId).filter((l) => /cut off/.test(String(l.msg)))).toEqual([]);
    expect(status).toBe(200);
    expect(complete).toBe(true);
    const orders = JSON.parse(body) as { id: number }[];
    expect(orders).toHaveLength(ORDERS);
    expect(orders[ORDERS - 1].id).toBe(ORDERS);
  }, 60_000);

  it('cuts a client that reads nothing after the stall timeout, frees what it held, and logs one warning without a stack', async () => {
    const reqId = 'stalled-list-1';
    const reader = await stalledReader(strict.url, { ...auth, 'X-Request-Id': reqId });
    expect(reader.status).toBe(200);

    await strict.app.waitFor(new RegExp(`"reqId":"${reqId}".*cut off`));

    // The connection ends without the body's last chunk: no client can take it for a whole list.
    const { body } = await reader.readRest();
    expect(body.endsWith('\r\n0\r\n\r\n')).toBe(false);
    // Its connection goes back to the pool as the cut unwinds, a moment after the log line.
    await eventually(heldBackends, (held) => held === 0, 5_000);
    await strict.app.waitFor(new RegExp(`"id":"${reqId}".*request aborted`));
    const lines = logLines(strict.app, reqId);
    const cut = lines.filter((l) => /cut off/.test(String(l.msg)));
    expect(cut).toHaveLength(1);
    expect(cut[0].level).toBe(40);
    expect(cut[0]).not.toHaveProperty('err');
    expect(JSON.stringify(cut[0])).not.toMatch(/\n\s+at /);
    expect(lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
    // And the list is served whole to the next client.
    const next = await httpRequest(`${strict.url}/v1/store/orders`, { headers: auth });
    expect(next.status).toBe(200);
    expect((JSON.parse(next.body) as unknown[]).length).toBe(ORDERS);
  }, 60_000);

  it('does not wait for stalled clients at SIGTERM: cuts them and exits 0 before its deadline', async () => {
    const stalled = await Promise.all(
      Array.from({ length: 2 }, (_, i) =>
        stalledReader(small.url, { ...auth, 'X-Request-Id': `stalled-at-sigterm-${i}` }),
      ),
    );
    try {
      expect(stalled.map((s) => s.status)).toEqual([200, 200]);
      small.app.kill('SIGTERM');
      // Exit 1, with "Shutdown did not finish", is the 8 s deadline (SHUTDOWN_TIMEOUT_MS).
      expect(await small.app.exited).toEqual({ code: 0, signal: null });
      expect(small.app.find(/Shutdown complete/)).toBeDefined();
      for (let i = 0; i < 2; i++) {
        const cut = logLines(small.app, `stalled-at-sigterm-${i}`).filter((l) =>
          /cut off/.test(String(l.msg)),
        );
        expect(cut).toHaveLength(1);
      }
    } finally {
      for (const reader of stalled) reader.socket.destroy();
    }
  }, 60_000);
});
