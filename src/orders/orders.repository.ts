import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AuditActor } from '../audit/audit-event';
import { isConnectionLost } from '../database/database-errors';
import { databaseSettings, type DatabaseEnvironment } from '../database/database.settings';
import { PoolShare } from '../database/pool-share';
import { type NamedStatement, statementRows, withArrayRows } from '../database/statements';
import type { OrderRow } from './order-json';
import type { OrderStatus } from './order-status';
import {
  CANCEL_ORDER,
  DEMO_ORDERS_SQL,
  FIRST_ORDERS,
  NO_ORDERS_SQL,
  ORDER_STATUS,
  ORDERS_AFTER,
  ORDERS_WITH_IDS,
} from './orders.sql';

/** Tries of a list batch whose connection keeps turning out to be gone. */
const LOST_CONNECTION_ATTEMPTS = 3;

const FIRST_ORDERS_AS_ARRAYS = withArrayRows(FIRST_ORDERS);
const ORDERS_AFTER_AS_ARRAYS = withArrayRows(ORDERS_AFTER);
const ORDERS_WITH_IDS_AS_ARRAYS = withArrayRows(ORDERS_WITH_IDS);

/**
 * The shared `orders` table: its statements (orders.sql.ts), run on the pool under TypeORM's
 * DataSource as raw rows, each order an array of its columns mapped once (order-json.ts): entity
 * hydration costs several times the framework itself on a list of thousands.
 */
@Injectable()
export class OrdersRepository {
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

  /** The first orders by id, one more than a batch (`LIST_BATCH_SIZE`): one round trip. */
  firstOrders(): Promise<OrderRow[]> {
    return statementRows<OrderRow>(this.dataSource, FIRST_ORDERS_AS_ARRAYS);
  }

  /**
   * A batch of the orders after id `lastId`, by id, once the list's share of the pool has room
   * for it; none if `wanted()` has turned false by then (the list was abandoned).
   */
  ordersAfter(lastId: string, wanted: () => boolean): Promise<OrderRow[]> {
    return this.listBatches.run(() =>
      wanted() ? this.readOrdersAfter(lastId) : Promise.resolve([]),
    );
  }

  /**
   * A batch whose connection turns out to be gone (the server ended it while it sat idle in the
   * pool, and the pool had not heard yet) is read again on another: a read repeated is the same
   * read, and a stream cut mid-list would cost the client the whole list.
   */
  private async readOrdersAfter(lastId: string): Promise<OrderRow[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await statementRows<OrderRow>(this.dataSource, ORDERS_AFTER_AS_ARRAYS, [lastId]);
      } catch (error) {
        if (attempt >= LOST_CONNECTION_ATTEMPTS || !isConnectionLost(error)) throw error;
      }
    }
  }

  /**
   * Cancels the order if it is pending, with its audit event by `by`, in one statement; the
   * order's status after it (`pending`: it lost a race with another writer), or undefined when
   * there is no such order.
   */
  cancel(id: string, by: AuditActor): Promise<OrderStatus | undefined> {
    return this.statusFrom(CANCEL_ORDER, [id, by.actor, by.requestId ?? null]);
  }

  /** The order's status, or undefined when there is no such order. */
  statusOf(id: string): Promise<OrderStatus | undefined> {
    return this.statusFrom(ORDER_STATUS, [id]);
  }

  private async statusFrom(
    statement: NamedStatement,
    values: (string | null)[],
  ): Promise<OrderStatus | undefined> {
    const rows = await statementRows<{ status: OrderStatus }>(this.dataSource, statement, values);
    return rows.length === 0 ? undefined : rows[0].status;
  }

  /** Whether the table holds no order at all. */
  async isEmpty(): Promise<boolean> {
    const [{ empty }] = await this.dataSource.query<{ empty: boolean }[]>(NO_ORDERS_SQL);
    return empty;
  }

  /** Adds the demo orders, one in every status (and one of the largest id). */
  async addDemoOrders(): Promise<void> {
    await this.dataSource.query(DEMO_ORDERS_SQL);
  }
}

/**
 * The orders with these ids (int64 decimal strings), as rows, in one statement: for the objects
 * of order events, which their consumers read with the DataSource they are given.
 */
export function ordersWithIds(dataSource: DataSource, ids: string[]): Promise<OrderRow[]> {
  return statementRows<OrderRow>(dataSource, ORDERS_WITH_IDS_AS_ARRAYS, [ids]);
}
