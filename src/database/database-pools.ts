import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { Pool } from 'pg';
import { APP_OPTIONS, type AppOptions } from './app-options';
import { APPLICATION_NAME } from './data-source-options';
import { databaseSettings, type DatabaseEnvironment } from './database.settings';
import { StatementPool } from './statement-pool';

/** A pool of connections of its own, apart from the DataSource's, for one kind of work. */
export interface PoolRequest {
  /** What its connections serve, as the log says it (`idle <name> connection lost`). */
  name: string;
  /** Its number of connections. */
  size: number;
  /** How long a statement may run on its connections (their `statement_timeout`). */
  statementTimeoutMs: number;
  /**
   * Settings each connection carries from its start, as startup parameters (`-c name=value`):
   * no statement is spent on them.
   */
  sessionSettings?: Readonly<Record<string, string>>;
}

/** Session settings as a connection's startup `options` (`-c name=value ...`). */
export function sessionOptions(settings: Readonly<Record<string, string>>): string {
  return Object.entries(settings)
    .map(([setting, value]) => `-c ${setting}=${value}`)
    .join(' ');
}

/**
 * Makes the pools a feature runs on apart from the DataSource's, the way the service connects:
 * its database URL and application name, the connect timeout, TCP keep-alive, a listener for the
 * errors of lost connections, and each pool closed at shutdown.
 *
 * Their connections are kept open while idle: a pool of its own is for work that may not wait
 * for a connection to open (a TCP connection and a SCRAM login).
 */
@Injectable()
export class DatabasePools implements OnApplicationShutdown {
  private readonly pools: Pool[] = [];

  constructor(
    @Inject(APP_OPTIONS) private readonly options: AppOptions,
    @Inject(databaseSettings.KEY) private readonly database: DatabaseEnvironment,
    @InjectPinoLogger(DatabasePools.name) private readonly logger: PinoLogger,
  ) {}

  createPool({ name, size, statementTimeoutMs, sessionSettings = {} }: PoolRequest): Pool {
    const pool = new Pool({
      connectionString: this.options.databaseUrl,
      application_name: APPLICATION_NAME,
      max: size,
      idleTimeoutMillis: 0,
      connectionTimeoutMillis: this.database.DATABASE_CONNECT_TIMEOUT_MS,
      keepAlive: true,
      statement_timeout: statementTimeoutMs,
      options: sessionOptions(sessionSettings),
    });
    // An idle connection that fails (the database restarted) is dropped by the pool; without a
    // listener its error would end the process. A checked-out one's error fails its query.
    pool.on('error', (err) => this.logger.warn({ err }, `idle ${name} connection lost`));
    pool.on('connect', (client) => {
      client.on('error', (err) => this.logger.warn({ err }, `${name} connection lost`));
    });
    this.pools.push(pool);
    return pool;
  }

  /** A pool of its own, lent a connection at a time, for statements (`StatementPool.run`). */
  createStatementPool(request: PoolRequest): StatementPool {
    return new StatementPool(this.createPool(request));
  }

  /** Closes every pool made here, after the requests in flight. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.pools.map((pool) => pool.end()));
  }
}
