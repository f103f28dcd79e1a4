/**
 * The v1 list on `pg-query-stream` (pg-cursor's portal under a Readable), for the comparison of
 * bench/list-stream.ts only: preloaded before the service (`--require` after swc-node's hook),
 * it replaces `OrdersService#listAsJson` of that one process. The service itself never loads it.
 *
 * The same design as the service's list where pg-query-stream allows it: a list of up to 1,001
 * orders is the same single query, answered whole; a longer one is those rows, then the orders
 * after the last of them read from one portal, 1,000 rows per fetch, with the same JSON bytes
 * (`LIST_STREAM_FIRST=off`: every list from the portal, no first query). The portal needs one
 * connection for the whole list: it is taken within the same half of the pool as the service's
 * batches (`LIST_STREAM_SHARE=off`: straight from the pool) and given back when the stream
 * closes, at its end, on its error, or when the client goes away.
 */
import { Transform, type Readable } from 'node:stream';
import type { PoolClient } from 'pg';
import QueryStream from 'pg-query-stream';
import type { DataSource } from 'typeorm';
import { PoolShare } from '../../src/database/pool-share';
import { type OrderRow, orderJson } from '../../src/orders/order-json';
import { wholeListJson } from '../../src/orders/order-list-stream';
import { OrdersService } from '../../src/orders/orders.service';
import { FIRST_ORDERS, LIST_BATCH_SIZE, ORDER_COLUMNS } from '../../src/orders/orders.sql';
import { pgPoolOf } from '../../src/platform/pg-pool';

const REST_SQL = `SELECT ${ORDER_COLUMNS} FROM orders WHERE id > $1 ORDER BY id`;
const ALL_SQL = `SELECT ${ORDER_COLUMNS} FROM orders ORDER BY id`;

/** The first rows (already read, maybe none) as the array's opening, then each fetch of the portal. */
function jsonArray(first: OrderRow[]): Transform {
  let text = `[${first.map(orderJson).join(',')}`;
  let separator = first.length > 0 ? ',' : '';
  let rows = 0;
  return new Transform({
    writableObjectMode: true,
    transform(row: OrderRow, _encoding, done) {
      text += `${separator}${orderJson(row)}`;
      separator = ',';
      // One chunk per fetch of the portal, as the service writes one per batch.
      if (++rows === LIST_BATCH_SIZE) {
        rows = 0;
        this.push(text);
        text = '';
      }
      done();
    },
    flush(done) {
      done(null, `${text}]`);
    },
  });
}

/** The rest of the list from the portal, on `client`, given back once the stream closes. */
function restOfList(client: PoolClient, first: OrderRow[], closed: () => void): Readable {
  const config = { batchSize: LIST_BATCH_SIZE, rowMode: 'array' } as const;
  const rows = client.query(
    first.length > 0
      ? new QueryStream(REST_SQL, [first[first.length - 1][0]], config)
      : new QueryStream(ALL_SQL, [], config),
  );
  const json = jsonArray(first);
  let failure: Error | undefined;
  rows.once('error', (error) => {
    failure = error;
    json.destroy(error);
  });
  // pg-query-stream closes its portal before 'close': the connection is clean unless it failed.
  rows.once('close', () => {
    client.release(failure);
    closed();
  });
  json.once('close', () => rows.destroy());
  return rows.pipe(json);
}

const share =
  process.env.LIST_STREAM_SHARE === 'off'
    ? undefined
    : PoolShare.halfOf(Number(process.env.DATABASE_POOL_SIZE ?? 10));

/** The slot of the share, held until `release` is called. */
async function takeSlot(): Promise<() => void> {
  if (!share) return () => undefined;
  return new Promise((taken) => {
    void share.run(() => new Promise<void>((release) => taken(release)));
  });
}

OrdersService.prototype.listAsJson = async function listAsJson(
  this: OrdersService,
): Promise<Readable | string> {
  // The service's own pool, under its repository's DataSource (private fields of both classes,
  // reached here for the bench only).
  const { orders } = this as unknown as { orders: { dataSource: DataSource } };
  const pool = pgPoolOf(orders.dataSource);
  let first: OrderRow[] = [];
  if (process.env.LIST_STREAM_FIRST !== 'off') {
    ({ rows: first } = await pool.query<OrderRow>({ ...FIRST_ORDERS, rowMode: 'array' }));
    if (first.length <= LIST_BATCH_SIZE) return wholeListJson(first);
  }
  const release = await takeSlot();
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    release();
    throw error;
  }
  return restOfList(client, first, release);
};
