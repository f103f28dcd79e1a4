import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import type { PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf } from '../platform/pg-pool';

/**
 * Keeps a lost database connection from crashing the process. node-postgres emits `error` on a
 * checked-out client that is between queries when the server goes away (e.g. 57P01 at shutdown,
 * while a streamed list waits on a slow reader); with no listener that is an uncaught exception.
 * The pool listens only on idle clients and TypeORM only on its own query runners, so this adds
 * a listener to every client when it is first acquired. The failed client's next query fails and
 * its owner releases it as broken, as for any other connection error.
 * See https://node-postgres.com/apis/pool#releasing-clients ("handle errors on checked-out clients").
 */
@Injectable()
export class PoolClientErrorListener implements OnModuleInit {
  private readonly guarded = new WeakSet<PoolClient>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectPinoLogger(PoolClientErrorListener.name) private readonly logger: PinoLogger,
  ) {}

  onModuleInit(): void {
    // The first use of the pool accessor: a TypeORM that no longer keeps the pool there fails here.
    pgPoolOf(this.dataSource).on('acquire', (client) => {
      if (this.guarded.has(client)) return;
      this.guarded.add(client);
      client.on('error', (err) => {
        this.logger.warn({ err }, 'database connection lost while checked out');
      });
    });
  }
}
