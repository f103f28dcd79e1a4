import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf } from '../database/pg-pool';
import { decodeCursor, encodeCursor } from './order-cursor';
import type { OrderPage } from './order-page';
import type { OrderPageQuery } from './order-page-query';
import { OrderPageRow, orderPageStatements } from './order-page.sql';

/** Pages of the order list (v2): filtered, sorted, by keyset. */
@Injectable()
export class OrderPagesService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Pool {
    const pool = pgPoolOf(this.dataSource);
    if (!pool) throw new Error('The DataSource is not initialised');
    return pool;
  }

  /**
   * The page the query asks for. One row more than the limit is read, to know whether another
   * page follows; the statements run in turn until that many rows are in (the second, if any,
   * only on the page that crosses from dated to undated orders).
   */
  async find(query: OrderPageQuery): Promise<OrderPage> {
    const { filter, sort, limit, cursor } = query;
    const after = cursor === undefined ? undefined : decodeCursor(cursor, filter, sort);
    const rows: OrderPageRow[] = [];
    for (const { name, text, values } of orderPageStatements(filter, sort, after)) {
      const result = await this.pool.query<OrderPageRow>({
        name,
        text,
        values: [...values, limit + 1 - rows.length],
        rowMode: 'array',
      });
      rows.push(...result.rows);
      if (rows.length > limit) break;
    }
    if (rows.length <= limit) return { rows };
    rows.length = limit;
    const last = rows[limit - 1];
    const nextCursor = encodeCursor(filter, sort, { id: last[0], shipDate: last[3] });
    return { rows, nextCursor };
  }
}
