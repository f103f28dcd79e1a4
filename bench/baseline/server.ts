/**
 * The benchmark's baseline: the least a Node server can do to answer the two operations the way
 * the service does, with no framework. `node:http` and `pg` only:
 *
 * - `Authorization: Bearer <key>` parsed, the key hashed with SHA-256 and looked up in a map of
 *   the keys in the database (loaded once at start);
 * - the key's minute and day windows checked and counted in memory, the binding one reported in
 *   the X-RateLimit-* headers;
 * - the service's SQL, sent by name (prepared once per connection) as the service sends it, and
 *   the same JSON text (int64 exact: pg gives int8 as strings, written
 *   unquoted).
 *
 * Started by bench/run.ts with DATABASE_URL (and PORT, 0 for any); it logs its URL as the service
 * does ("listening on http://127.0.0.1:<port>/v1"), so the same launcher finds its port.
 */
import { hash } from 'node:crypto';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
// The service's own statements and row mapper (plain modules, no framework): the same work.
import { OrderRow, orderJson } from '../../src/orders/order-json';
import type { NamedStatement } from '../../src/database/statements';
import { CANCEL_ORDER, ORDER_STATUS } from '../../src/orders/orders.sql';
import { LIST_ORDERS } from '../reference/list-orders';

const BEARER = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i;
const ORDER_PATH = /^\/v1\/store\/orders\/(-?[0-9]+)$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

interface Window {
  limit: number;
  ttlMs: number;
  count: number;
  resetAtMs: number;
}

interface Key {
  /** Sent with a cancel as the audit trail's actor, as the service sends it. */
  actor: string;
  minute: Window;
  day: Window;
}

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const keys = new Map<string, Key>();

async function loadKeys(): Promise<void> {
  const { rows } = await pool.query<{
    id: string;
    key_hash: string;
    per_minute: number;
    per_day: number;
  }>(
    `SELECT id, key_hash, per_minute, per_day FROM api_keys
      WHERE plan = 'enterprise' AND revoked_at IS NULL`,
  );
  for (const row of rows) {
    keys.set(row.key_hash, {
      actor: `key:${row.id}`,
      minute: { limit: row.per_minute, ttlMs: 60_000, count: 0, resetAtMs: 0 },
      day: { limit: row.per_day, ttlMs: 86_400_000, count: 0, resetAtMs: 0 },
    });
  }
}

function reply(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ code, message, status }));
}

/** Counts the request in both windows if both have room, and sets the binding window's headers. */
function admit(key: Key, res: ServerResponse): boolean {
  const now = Date.now();
  for (const w of [key.minute, key.day]) {
    if (w.resetAtMs <= now) {
      w.count = 0;
      w.resetAtMs = now + w.ttlMs;
    }
  }
  const admitted = key.minute.count < key.minute.limit && key.day.count < key.day.limit;
  if (admitted) {
    key.minute.count++;
    key.day.count++;
  }
  const left = (w: Window): number => Math.max(0, w.limit - w.count);
  const binding =
    left(key.day) < left(key.minute) ||
    (left(key.day) === left(key.minute) && key.day.resetAtMs > key.minute.resetAtMs)
      ? key.day
      : key.minute;
  res.setHeader('X-RateLimit-Limit', binding.limit);
  res.setHeader('X-RateLimit-Remaining', left(binding));
  res.setHeader('X-RateLimit-Reset', Math.ceil(binding.resetAtMs / 1000));
  return admitted;
}

async function list(res: ServerResponse): Promise<void> {
  const { rows } = await pool.query<OrderRow>({ ...LIST_ORDERS, rowMode: 'array' });
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(`[${rows.map(orderJson).join(',')}]`);
}

async function cancel(res: ServerResponse, text: string, key: Key): Promise<void> {
  const value = text.length > 64 ? undefined : BigInt(text);
  if (value === undefined || value < INT64_MIN || value > INT64_MAX) {
    reply(res, 400, 'INVALID_ORDER_ID', 'orderId must be a base-10 integer in the int64 range');
    return;
  }
  const id = value.toString();
  const statusAfter = async (
    statement: NamedStatement,
    values: (string | null)[],
  ): Promise<string | undefined> =>
    (await pool.query<{ status: string }>({ ...statement, values })).rows.at(0)?.status;
  // The audit trail's actor and request id (none: this server gives requests no id).
  let status = await statusAfter(CANCEL_ORDER, [id, key.actor, null]);
  if (status === 'pending') status = await statusAfter(ORDER_STATUS, [id]);
  if (status === undefined) reply(res, 404, 'ORDER_NOT_FOUND', 'No order with this id exists');
  else if (status === 'shipped') reply(res, 409, 'ORDER_ALREADY_SHIPPED', 'Already shipped');
  else res.writeHead(204).end();
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
  const key = token && keys.get(hash('sha256', token, 'hex'));
  if (!key) {
    res.setHeader('WWW-Authenticate', 'Bearer realm="store-orders"');
    reply(res, 401, 'UNAUTHORIZED', 'A valid API key is required');
    return;
  }
  if (!admit(key, res)) {
    reply(res, 429, 'RATE_LIMIT_EXCEEDED', 'Too many requests');
    return;
  }
  const orderId = ORDER_PATH.exec(req.url ?? '')?.[1];
  if (req.method === 'GET' && req.url === '/v1/store/orders') await list(res);
  else if (req.method === 'DELETE' && orderId !== undefined) await cancel(res, orderId, key);
  else reply(res, 404, 'NOT_FOUND', 'No such resource');
}

async function main(): Promise<void> {
  await loadKeys();
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (res.headersSent) res.destroy();
      else reply(res, 500, 'INTERNAL_ERROR', 'Internal error');
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) =>
    server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', resolve),
  );
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`baseline listening on http://127.0.0.1:${port}/v1\n`);
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    void pool.end().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`baseline: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
