import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { DatabasePools } from '../../database/database-pools';
import {
  ConnectionWaitExpiredError,
  isStatementCancelled,
  type StatementConnection,
  StatementPool,
} from '../../database/statement-pool';
import type { NamedStatement } from '../../database/statements';
import { orderSettings, type OrderSettings } from '../orders.settings';
import {
  type FilterFractions,
  filterFractionsOf,
  type FilterStatisticsRow,
} from './order-page-estimate';
import { ORDER_SORTS, type OrderFilter } from './order-page-query';
import {
  CURSOR_SECRET_SQL,
  FILTER_STATISTICS_SQL,
  orderPageStatement,
  PAGE_PLANNER_SETTINGS,
  type PageStatement,
  scanLimitOf,
} from './order-page.sql';

/**
 * The part of a page's database budget it may spend waiting for a connection; its statement may
 * take the rest. Fixed in advance because the statement's limit is its connection's
 * `statement_timeout`, set when the connection opens: the two add up to the budget.
 */
const CONNECTION_WAIT_SHARE = 0.25;

/** How long a page trusts the statistics it read: they change only as ANALYZE runs. */
const STATISTICS_MAX_AGE_MS = 5 * 60_000;

/** A page that ran out of its database budget: no connection in time, or its statement's time. */
export class PageOverBudgetError extends Error {
  constructor(cause: unknown) {
    super('the page ran out of its database budget', { cause });
    this.name = 'PageOverBudgetError';
  }
}

/**
 * What v2's pages read, on connections of their own (PAGE_POOL_SIZE of them), apart from the
 * DataSource's pool. Each carries a page's settings from its start, as startup parameters (no
 * statement spent on them): read-only transactions, the planner settings of
 * `PAGE_PLANNER_SETTINGS`, and a statement timeout of the page's budget less its wait for a
 * connection. So a page is one round trip, its prepared statement, and leaves nothing to undo:
 * no transaction, no session setting changed.
 *
 * The connections are opened and warmed at start, before the instance listens, and kept open
 * while idle: opening one (a TCP connection and a SCRAM login) can take longer than a page's wait
 * for a connection on a busy machine, and a page that waited for it would be answered 503
 * although nothing was overloaded. Made, and closed at shutdown, by `DatabasePools`.
 */
@Injectable()
export class OrderPagesRepository implements OnApplicationBootstrap {
  readonly connections: StatementPool;
  /** How long a page may wait for a connection. */
  readonly connectWaitMs: number;
  /** How long a page's statement may run (its connection's `statement_timeout`). */
  readonly statementTimeoutMs: number;

  private fractions: FilterFractions | undefined;
  private fractionsReadAtMs = -Infinity;

  constructor(
    pools: DatabasePools,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(orderSettings.KEY) settings: OrderSettings,
    @InjectPinoLogger(OrderPagesRepository.name) private readonly logger: PinoLogger,
  ) {
    const budgetMs = settings.PAGE_DATABASE_BUDGET_MS;
    this.connectWaitMs = Math.floor(budgetMs * CONNECTION_WAIT_SHARE);
    this.statementTimeoutMs = budgetMs - this.connectWaitMs;
    this.connections = pools.createStatementPool({
      name: 'v2 page',
      size: settings.PAGE_POOL_SIZE,
      statementTimeoutMs: this.statementTimeoutMs,
      sessionSettings: { ...PAGE_PLANNER_SETTINGS, default_transaction_read_only: 'on' },
    });
  }

  /**
   * The rows of a page's statement (each an array of its columns), on a connection of the
   * pages' pool, within the page's database budget, all of it: the wait for a connection, then
   * the statement. Its values come from `valuesOf`, given the statistics of the filters no index
   * serves when `withStatistics` (else undefined). An overrun is a PageOverBudgetError.
   */
  async pageRows<R>(
    statement: NamedStatement,
    withStatistics: boolean,
    valuesOf: (fractions: FilterFractions | undefined) => unknown[],
  ): Promise<R[]> {
    try {
      return await this.connections.run(this.connectWaitMs, async (connection) => {
        const fractions = withStatistics ? await this.statistics(connection) : undefined;
        return connection.rows<R>(
          { name: statement.name, text: statement.text, rowMode: 'array' },
          valuesOf(fractions),
        );
      });
    } catch (error) {
      if (error instanceof ConnectionWaitExpiredError || isStatementCancelled(error)) {
        throw new PageOverBudgetError(error);
      }
      throw error;
    }
  }

  /**
   * The statistics of the filters no index serves, read from `pg_stats` by the first page that
   * needs them and again once they are STATISTICS_MAX_AGE_MS old, on that page's connection
   * (within its budget): a statement of its own, so once in minutes a page is two round trips.
   * None when the table was never analysed: pages examine SCAN_FACTOR orders per order then.
   */
  private async statistics(connection: StatementConnection): Promise<FilterFractions | undefined> {
    if (performance.now() - this.fractionsReadAtMs >= STATISTICS_MAX_AGE_MS) {
      this.fractions = filterFractionsOf(
        await connection.rows<FilterStatisticsRow>(FILTER_STATISTICS_SQL),
      );
      this.fractionsReadAtMs = performance.now();
    }
    return this.fractions;
  }

  /**
   * The secret the migration CreateOrderCursorSecret stored, undefined if none is there (read on
   * the DataSource's pool: the service needs no more than SELECT on its table).
   */
  async storedCursorSecret(): Promise<Buffer | undefined> {
    const [row] =
      await this.dataSource.query<({ secret: Buffer } | undefined)[]>(CURSOR_SECRET_SQL);
    return row?.secret;
  }

  /**
   * Opens the pool's connections and warms each before the instance listens: the statistics,
   * then the first page of every sort, unfiltered and by status. A connection's first statements
   * load its server process's caches of the table, its indexes and their plans, which on a busy
   * machine took a page's whole budget: the first pages of a new instance were answered 503.
   * A database that is down at start delays the start by its connect timeout at most; the pool
   * opens a connection again when a page asks for one.
   */
  async onApplicationBootstrap(): Promise<void> {
    const failure = await this.connections.open(async (connection) => {
      await connection.rows(FILTER_STATISTICS_SQL);
      for (const { name, text, values } of WARM_UP_STATEMENTS) {
        await connection.rows({ name, text }, [...values, scanLimitOf(1), 2]);
      }
    });
    if (failure === undefined) return;
    this.logger.warn(
      { err: failure },
      'v2 page connections not opened at start; opened when a page asks for one',
    );
  }
}

/** The first page of each sort, unfiltered and by one status: what a connection is warmed with. */
export const WARM_UP_STATEMENTS: PageStatement[] = ORDER_SORTS.flatMap((sort) =>
  [{}, { statuses: ['pending'] } satisfies OrderFilter].map((filter) =>
    orderPageStatement(filter, sort, undefined),
  ),
);
