import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DemoOrdersSeeder } from './demo-orders.seeder';
import { Order } from './order.entity';
import { OrdersController } from './orders.controller';
import { OrdersService } from './orders.service';

/**
 * Orders: list them, cancel one. Owns its entity (registered here), its migrations
 * (`migrations/`), its error codes (`order.errors.ts`) and its OpenAPI tag (on the controller).
 */
@Module({
  imports: [TypeOrmModule.forFeature([Order])],
  controllers: [OrdersController],
  providers: [OrdersService, DemoOrdersSeeder],
})
export class OrdersModule {}
