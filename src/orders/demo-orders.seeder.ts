import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { APP_OPTIONS, AppOptions } from '../database/app-options';

/** Demo orders in every status, so a fresh `npm start` has something to list and cancel. */
const DEMO_ORDERS_SQL = `
  INSERT INTO orders (pet_id, quantity, ship_date, complete, status) VALUES
    (101, 1, now() + interval '2 days', false, 'pending'),
    (102, 3, now() + interval '5 days', false, 'pending'),
    (103, 2, now() - interval '1 day', true, 'shipped'),
    (104, 1, now() - interval '3 days', true, 'shipped'),
    (105, 4, NULL, false, 'cancelled'),
    (9223372036854775807, 1, NULL, false, 'pending')`;

@Injectable()
export class DemoOrdersSeeder implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_OPTIONS) private readonly options: AppOptions,
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectPinoLogger(DemoOrdersSeeder.name) private readonly logger: PinoLogger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.seedDemoData) return;
    // Orders are never deleted here, so an empty table means a first start (or one that failed).
    const [{ empty }] = await this.dataSource.query<{ empty: boolean }[]>(
      'SELECT NOT EXISTS (SELECT 1 FROM orders) AS empty',
    );
    if (!empty) return;
    await this.dataSource.query(DEMO_ORDERS_SQL);
    this.logger.info('seeded demo orders in every status into the embedded database');
  }
}
