import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Readable } from 'node:stream';
import type { Pool } from 'pg';
import Cursor from 'pg-cursor';
import { DataSource } from 'typeorm';
import { ApiException } from '../common/errors/api.exception';
import { ErrorCode } from '../common/errors/error-code';
import { LIST_ORDERS_SQL, OrderRow } from './order-json';
import { CANCEL_SQL, STATUS_SQL } from './orders.sql';
import { LIST_BATCH_SIZE, OrderListJson, wholeListJson } from './order-list-json';
import { OrderStatus } from './order-status';
import { pgPoolOf } from '../database/pg-pool';

/**
 * Orders of the shared `orders` table. The hot paths use the pool under TypeORM's DataSource
 * directly, with raw rows and one explicit mapper: entity hydration costs several times the
 * framework itself on a list of thousands.
 */
@Injectable()
export class OrdersService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Pool {
    const pool = pgPoolOf(this.dataSource);
    if (!pool) throw new Error('The DataSource is not initialised');
    return pool;
  }

  /**
   * Every order, by id, as JSON text (one array). Rows come from a server-side cursor in batches:
   * a list that fits in the first batch is answered whole, a longer one as a stream, so memory
   * stays flat however large the table is. Resolves once the first batch has arrived: a database
   * that is down fails here, before any byte is sent, and gets a proper error response. Destroying
   * the stream (a client gone) closes the cursor and frees the connection at once.
   */
  async listAsJson(): Promise<Readable | string> {
    const client = await this.pool.connect();
    // pg-cursor writes Parse, Bind, Describe, Execute and two Flushes one by one: corked, they
    // leave in one write and wake the database once.
    const { stream } = client.connection;
    stream.cork();
    const cursor = client.query(new Cursor<OrderRow>(LIST_ORDERS_SQL, [], { rowMode: 'array' }));
    const firstBatch = cursor.read(LIST_BATCH_SIZE);
    stream.uncork();
    let first: OrderRow[];
    try {
      first = await firstBatch;
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw error;
    }
    if (first.length < LIST_BATCH_SIZE) {
      // The whole list: pg-cursor has closed the exhausted portal (and seen ReadyForQuery), so
      // the connection goes back to the pool before a byte is written.
      client.release();
      return wholeListJson(first);
    }
    return new OrderListJson(first, { client, cursor });
  }

  /** pending → cancelled; cancelled stays cancelled (DELETE is idempotent); shipped → 409. */
  async cancel(id: string): Promise<void> {
    let status = await this.statusAfterCancel(CANCEL_SQL, id);
    if (status === 'pending') status = await this.statusAfterCancel(STATUS_SQL, id);
    if (status === undefined) throw new ApiException(ErrorCode.ORDER_NOT_FOUND);
    if (status === 'shipped') throw new ApiException(ErrorCode.ORDER_ALREADY_SHIPPED);
  }

  private async statusAfterCancel(sql: string, id: string): Promise<OrderStatus | undefined> {
    const { rows } = await this.pool.query<{ status: OrderStatus }>(sql, [id]);
    return rows[0]?.status;
  }
}
