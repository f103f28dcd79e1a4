import { Injectable } from '@nestjs/common';
import { Readable } from 'node:stream';
import type { AuditActor } from '../audit/audit-event';
import { ApiException } from '../common/errors/api.exception';
import { OrderErrors } from './order.errors';
import { LIST_BATCH_SIZE } from './orders.sql';
import { OrderListStream, wholeListJson } from './order-list-stream';
import { OrdersRepository } from './orders.repository';

/** Orders of the shared `orders` table: the whole list, and cancels. */
@Injectable()
export class OrdersService {
  constructor(private readonly orders: OrdersRepository) {}

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
    const first = await this.orders.firstOrders();
    if (first.length <= LIST_BATCH_SIZE) return wholeListJson(first);
    return new OrderListStream(first, (lastId, wanted) => this.orders.ordersAfter(lastId, wanted));
  }

  /**
   * pending → cancelled, with its audit event by `by`; cancelled stays cancelled (DELETE is
   * idempotent; no event); shipped → 409.
   */
  async cancel(id: string, by: AuditActor): Promise<void> {
    // The cancel answers the status after it; 'pending' there means it lost a race with another
    // writer, so the status is read again.
    let status = await this.orders.cancel(id, by);
    if (status === 'pending') status = await this.orders.statusOf(id);
    if (status === undefined) throw new ApiException(OrderErrors.ORDER_NOT_FOUND);
    if (status === 'shipped') throw new ApiException(OrderErrors.ORDER_ALREADY_SHIPPED);
  }
}
