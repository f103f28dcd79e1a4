import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DemoOrdersSeeder } from './demo-orders.seeder';
import { Order } from './order.entity';
import { OrderCursorSecret } from './pages/order-cursor-secret';
import { OrderPagesRepository } from './pages/order-pages.repository';
import { OrderPagesService } from './pages/order-pages.service';
import { OrdersController } from './orders.controller';
import { OrdersV2Controller } from './pages/orders-v2.controller';
import { OrdersRepository } from './orders.repository';
import { OrdersService } from './orders.service';
import { databaseSettings } from '../database/database.settings';
import { orderSettings } from './orders.settings';
// What events about orders carry, for their consumers.
import './order.events';

/**
 * Orders: list them (v1: all at once; v2: filtered, sorted, paged), cancel one. Owns its entity
 * (registered here), its migrations (`migrations/`), its error codes (`order.errors.ts`), its
 * scopes (`order.scopes.ts`), its settings (`orders.settings.ts`), its OpenAPI tag and the v1 and
 * v2 documents (on the controllers, `orders.documents.ts`).
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([Order]),
    ConfigModule.forFeature(orderSettings),
    ConfigModule.forFeature(databaseSettings),
  ],
  controllers: [OrdersController, OrdersV2Controller],
  providers: [
    OrdersService,
    OrdersRepository,
    OrderPagesService,
    OrderPagesRepository,
    OrderCursorSecret,
    DemoOrdersSeeder,
  ],
})
export class OrdersModule {}
