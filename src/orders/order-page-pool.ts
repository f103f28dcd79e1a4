import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { Pool, type PoolClient } from 'pg';
import { APP_OPTIONS, type AppOptions } from '../database/app-options';
import { databaseSettings, type DatabaseEnvironment } from '../database/database.settings';
import { APPLICATION_NAME } from '../database/data-source-options';
import { PAGE_PLANNER_SETTINGS } from './order-page.sql';
import { orderSettings, type OrderSettings } from './orders.settings';

/**
 * The part of a page's database budget it may spend waiting for a connection; its statement may
 * take the rest. Fixed in advance because the statement's limit is its connection's
 * `statement_timeout`, set when the connection opens: the two add up to the budget.
 */
const CONNECTION_WAIT_SHARE = 0.25;

/**
 * The connections v2's pages run on (PAGE_POOL_SIZE of them), apart from the DataSource's pool.
 * Each carries a page's settings from its start, as startup parameters (no statement spent on
 * them): read-only transactions, the planner settings of `PAGE_PLANNER_SETTINGS`, and a
 * statement timeout of the page's budget less its wait for a connection. So a page is one round
 * trip, its prepared statement, and leaves nothing to undo: no transaction, no session setting
 * changed.
 *
 * The connections are opened in the background at start and kept open while idle: opening one
 * (a TCP connection and a SCRAM login) can take longer than a page's wait for a connection on a
 * busy machine, and a page that waited for it would be answered 503 although nothing was
 * overloaded. A database that is down at start costs nothing here: the pool opens a connection
 * again when a page asks for one. Closed at shutdown after the requests in flight.
 */
@Injectable()
export class OrderPagePool implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly pool: Pool;
  /** How long a page may wait for a connection. */
  readonly connectWaitMs: number;
  /** How long a page's statement may run (its connection's `statement_timeout`). */
  readonly statementTimeoutMs: number;
  private readonly logger: PinoLogger;

  constructor(
    @Inject(APP_OPTIONS) options: AppOptions,
    @Inject(databaseSettings.KEY) database: DatabaseEnvironment,
    @Inject(orderSettings.KEY) settings: OrderSettings,
    @InjectPinoLogger(OrderPagePool.name) logger: PinoLogger,
  ) {
    const budgetMs = settings.PAGE_DATABASE_BUDGET_MS;
    this.connectWaitMs = Math.floor(budgetMs * CONNECTION_WAIT_SHARE);
    this.statementTimeoutMs = budgetMs - this.connectWaitMs;
    const sessionSettings = {
      ...PAGE_PLANNER_SETTINGS,
      default_transaction_read_only: 'on',
    };
    this.pool = new Pool({
      connectionString: options.databaseUrl,
      application_name: APPLICATION_NAME,
      max: settings.PAGE_POOL_SIZE,
      idleTimeoutMillis: 0,
      connectionTimeoutMillis: database.DATABASE_CONNECT_TIMEOUT_MS,
      keepAlive: true,
      statement_timeout: this.statementTimeoutMs,
      options: Object.entries(sessionSettings)
        .map(([name, value]) => `-c ${name}=${value}`)
        .join(' '),
    });
    // An idle connection that fails (the database restarted) is dropped by the pool; without a
    // listener its error would end the process. A checked-out one's error fails its query.
    this.pool.on('error', (err) => logger.warn({ err }, 'idle v2 page connection lost'));
    this.logger = logger;
    this.pool.on('connect', (client) => {
      client.on('error', (err) => logger.warn({ err }, 'v2 page connection lost'));
    });
  }

  /**
   * A connection within `connectWaitMs`, or undefined: one that comes later is given back at
   * once. (pg's own connection timeout, DATABASE_CONNECT_TIMEOUT_MS, is the longer bound.)
   */
  async connect(): Promise<PoolClient | undefined> {
    const connecting = this.pool.connect();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.connectWaitMs);
    });
    try {
      const client = await Promise.race([connecting, late]);
      if (client === undefined) {
        connecting.then(
          (c) => c.release(),
          () => undefined,
        );
      }
      return client;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Opens the pool's connections in the background; the service starts as it would without them. */
  onApplicationBootstrap(): void {
    const opening = Array.from({ length: this.pool.options.max }, () => this.pool.connect());
    void Promise.allSettled(opening).then((results) => {
      for (const result of results) if (result.status === 'fulfilled') result.value.release();
      const failed = results.find((result) => result.status === 'rejected');
      if (failed !== undefined && !this.pool.ended) {
        this.logger.warn(
          { err: failed.reason as unknown },
          'v2 page connections not opened at start; opened when a page asks for one',
        );
      }
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
