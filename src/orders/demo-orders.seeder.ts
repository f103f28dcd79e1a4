import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { APP_OPTIONS, AppOptions } from '../database/app-options';
import { OrdersRepository } from './orders.repository';

/** Demo orders in every status, so a fresh `npm start` has something to list and cancel. */
@Injectable()
export class DemoOrdersSeeder implements OnApplicationBootstrap {
  constructor(
    @Inject(APP_OPTIONS) private readonly options: AppOptions,
    private readonly orders: OrdersRepository,
    @InjectPinoLogger(DemoOrdersSeeder.name) private readonly logger: PinoLogger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.seedDemoData) return;
    // Orders are never deleted here, so an empty table means a first start (or one that failed).
    if (!(await this.orders.isEmpty())) return;
    await this.orders.addDemoOrders();
    this.logger.info('seeded demo orders in every status into the embedded database');
  }
}
