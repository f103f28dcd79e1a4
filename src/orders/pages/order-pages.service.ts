import { Inject, Injectable } from '@nestjs/common';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { ApiException } from '../../common/errors/api.exception';
import { CommonErrors } from '../../common/errors/error-code';
import { decodeCursor, encodeCursor } from './order-cursor';
import { OrderCursorSecret } from './order-cursor-secret';
import type { OrderPage } from './order-page';
import { scanFactorOf } from './order-page-estimate';
import { OrderPagesRepository, PageOverBudgetError } from './order-pages.repository';
import { orderSettings, type OrderSettings } from '../orders.settings';
import type { OrderFilter, OrderPageQuery, OrderSort } from './order-page-query';
import {
  type OrderPageRow,
  type OrderScanRow,
  orderPageStatement,
  scanLimitOf,
} from './order-page.sql';

/**
 * Seconds a client should wait after a page over its budget: the database is overloaded then
 * (a page's own work is bounded), and an immediate retry would only add to it.
 */
const OVER_BUDGET_RETRY_AFTER_SECONDS = 10;

/** Pages of the order list (v2): filtered, sorted, by keyset, each bounded in rows and time. */
@Injectable()
export class OrderPagesService {
  private readonly budgetMs: number;

  constructor(
    private readonly pages: OrderPagesRepository,
    private readonly secret: OrderCursorSecret,
    @Inject(orderSettings.KEY) settings: OrderSettings,
    @InjectPinoLogger(OrderPagesService.name) private readonly logger: PinoLogger,
  ) {
    this.budgetMs = settings.PAGE_DATABASE_BUDGET_MS;
  }

  /**
   * The page the query asks for: one statement (order-page.sql.ts) that examines a bounded number
   * of orders, `scanLimitOf(limit, factor)` on its walk, and returns at most `limit + 1` matching
   * ones, to know whether another page follows. The factor follows PostgreSQL's statistics of a
   * status or complete filter (order-page-estimate.ts), read for this page. A full page continues
   * after its last order; a page whose scan reached its bound first continues after the last
   * order the scan examined, with fewer orders than `limit`, or none; a scan that ended before
   * its bound is the last page.
   *
   * A page over its database budget (PAGE_DATABASE_BUDGET_MS: the wait for a connection, then
   * the statement) is answered 503 with Retry-After and logged once, naming the route and the
   * page's shape.
   */
  async find(query: OrderPageQuery): Promise<OrderPage> {
    const { filter, sort, limit, cursor } = query;
    const key = await this.secret.get();
    const after = cursor === undefined ? undefined : decodeCursor(key, cursor, filter, sort);
    const { name, text, values, everyRowMatches } = orderPageStatement(filter, sort, after);
    const sparse = filter.statuses !== undefined || filter.complete !== undefined;
    const started = performance.now();
    let scanned: (OrderScanRow | OrderPageRow)[];
    try {
      scanned = await this.pages.pageRows({ name, text }, sparse, (fractions) => [
        ...values,
        scanLimitOf(limit, scanFactorOf(filter, fractions)),
        limit + 1,
      ]);
    } catch (error) {
      if (!(error instanceof PageOverBudgetError)) throw error;
      this.logger.warn(
        {
          route: 'GET /v2/store/orders',
          shape: shapeOf(filter, sort, after !== undefined),
          budgetMs: this.budgetMs,
          elapsedMs: Math.round(performance.now() - started),
        },
        'v2 page over its database budget',
      );
      throw new ApiException(CommonErrors.SERVICE_UNAVAILABLE, undefined, {
        'Retry-After': String(OVER_BUDGET_RETRY_AFTER_SECONDS),
      });
    }

    if (everyRowMatches) {
      const rows = scanned as OrderPageRow[];
      if (rows.length <= limit) return { rows };
      rows.length = limit;
      return { rows, nextCursor: this.cursorAfter(key, filter, sort, rows[limit - 1]) };
    }
    const rows: OrderPageRow[] = [];
    for (const row of scanned as OrderScanRow[]) {
      const [id, petId, quantity, shipDate, complete, status, matched, atBound] = row;
      if (matched) {
        if (rows.length === limit) {
          return { rows, nextCursor: this.cursorAfter(key, filter, sort, rows[limit - 1]) };
        }
        rows.push([id, petId, quantity, shipDate, complete, status]);
      }
      // The scan's last row: it stopped there, and the next page resumes after it.
      if (atBound) return { rows, nextCursor: this.cursorAfter(key, filter, sort, row) };
    }
    return { rows };
  }

  private cursorAfter(
    key: Buffer,
    filter: OrderFilter,
    sort: OrderSort,
    row: OrderPageRow | OrderScanRow,
  ): string {
    return encodeCursor(key, filter, sort, { id: row[0], shipDate: row[3] });
  }
}

/**
 * The shape of a page, as a log line names it: which filters, the sort, first or deep page; never
 * their values.
 */
function shapeOf(filter: OrderFilter, sort: OrderSort, deep: boolean): string {
  const filters: string[] = [];
  if (filter.statuses) filters.push(`status(${filter.statuses.length})`);
  if (filter.petId !== undefined) filters.push('petId');
  if (filter.complete !== undefined) filters.push('complete');
  if (filter.shipDateFrom !== undefined) filters.push('shipDateFrom');
  if (filter.shipDateTo !== undefined) filters.push('shipDateTo');
  return `${filters.join('&') || 'no filter'}; sort=${sort}; ${deep ? 'deep page' : 'page 1'}`;
}
