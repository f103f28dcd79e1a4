import { Module } from '@nestjs/common';
import { OrderPagesService } from './order-pages.service';
import { OrdersController } from './orders.controller';
import { OrdersV2Controller } from './orders-v2.controller';
import { OrdersService } from './orders.service';

@Module({
  controllers: [OrdersController, OrdersV2Controller],
  providers: [OrdersService, OrderPagesService],
})
export class OrdersModule {}
