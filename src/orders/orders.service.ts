import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Readable } from 'node:stream';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { AuditActor } from '../audit/audit-event';
import { ApiException } from '../common/errors/api.exception';
import { isConnectionLost } from '../database/database-errors';
import { databaseSettings, type DatabaseEnvironment } from '../database/database.settings';
import { pgPoolOf } from '../platform/pg-pool';
import { PoolShare } from '../database/pool-share';
import { configInheriting } from '../database/statement-call';
import { OrderRow } from './order-json';
import { OrderErrors } from './order.errors';
import {
  CANCEL_ORDER,
  FIRST_ORDERS,
  LIST_BATCH_SIZE,
  NamedStatement,
  ORDER_STATUS,
  ORDERS_AFTER,
} from './orders.sql';
import { OrderListStream, wholeListJson } from './order-list-stream';
import { OrderStatus } from './order-status';

/** Tries of a list batch whose connection keeps turning out to be gone. */
const LOST_CONNECTION_ATTEMPTS = 3;

/** The list's statements, answering each row as an array of its columns. */
const FIRST_ORDERS_AS_ARRAYS = { ...FIRST_ORDERS, rowMode: 'array' } as const;
const ORDERS_AFTER_AS_ARRAYS = { ...ORDERS_AFTER, rowMode: 'array' } as const;

/**
 * Orders of the shared `orders` table. The hot paths use the pool under TypeORM's DataSource
 * directly, with raw rows and one explicit mapper: entity hydration costs several times the
 * framework itself on a list of thousands.
 */
@Injectable()
export class OrdersService {
  /**
   * The batches of longer lists take at most half the pool at once: lists streamed to any number
   * of fast clients leave the other half to cancels, pages, key lookups and readiness.
   */
  private readonly listBatches: PoolShare;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(databaseSettings.KEY) database: DatabaseEnvironment,
  ) {
    this.listBatches = PoolShare.halfOf(database.DATABASE_POOL_SIZE);
  }

  private get pool(): Pool {
    return pgPoolOf(this.dataSource);
  }

  /**
   * Every order, by id, as JSON text (one array). The first batch (and one more row) comes from
   * one plain query: a list that fits is answered whole from that one round trip. A longer one is
   * a stream: those rows, then the orders after the last of them, a batch of 1,000 per query
   * (keyset: `id > last sent`), so memory stays flat however large the table is and no connection
   * nor transaction is held while the client reads. Each order is sent exactly once, as it was
   * when its batch was read. Resolves once the first rows have arrived: a database that is down
   * fails here, before any byte is sent, and gets a proper error response.
   */
  async listAsJson(): Promise<Readable | string> {
    const { rows: first } = await this.pool.query<OrderRow>(
      configInheriting(FIRST_ORDERS_AS_ARRAYS),
    );
    if (first.length <= LIST_BATCH_SIZE) return wholeListJson(first);
    return new OrderListStream(first, (lastId, wanted) =>
      this.listBatches.run(() => (wanted() ? this.ordersAfter(lastId) : Promise.resolve([]))),
    );
  }

  /**
   * A batch whose connection turns out to be gone (the server ended it while it sat idle in the
   * pool, and the pool had not heard yet) is read again on another: a read repeated is the same
   * read, and a stream cut mid-list would cost the client the whole list.
   */
  private async ordersAfter(lastId: string): Promise<OrderRow[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        const { rows } = await this.pool.query<OrderRow>(configInheriting(ORDERS_AFTER_AS_ARRAYS), [
          lastId,
        ]);
        return rows;
      } catch (error) {
        if (attempt >= LOST_CONNECTION_ATTEMPTS || !isConnectionLost(error)) throw error;
      }
    }
  }

  /**
   * pending → cancelled, with its audit event by `by`; cancelled stays cancelled (DELETE is
   * idempotent; no event); shipped → 409.
   */
  async cancel(id: string, by: AuditActor): Promise<void> {
    // The conditional UPDATE answers the status after it; 'pending' there means it lost a race
    // with another writer, so the status is read again.
    let status = await this.queryStatus(CANCEL_ORDER, [id, by.actor, by.requestId ?? null]);
    if (status === 'pending') status = await this.queryStatus(ORDER_STATUS, [id]);
    if (status === undefined) throw new ApiException(OrderErrors.ORDER_NOT_FOUND);
    if (status === 'shipped') throw new ApiException(OrderErrors.ORDER_ALREADY_SHIPPED);
  }

  /** The order's status as one statement (the cancel, or a plain read) returns it. */
  private async queryStatus(
    statement: NamedStatement,
    values: (string | null)[],
  ): Promise<OrderStatus | undefined> {
    const { rows } = await this.pool.query<{ status: OrderStatus }>(
      configInheriting(statement),
      values,
    );
    return rows[0]?.status;
  }
}
