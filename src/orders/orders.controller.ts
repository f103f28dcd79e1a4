import { Controller, Delete, Get, HttpCode, HttpStatus, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { sendJsonStream } from '../common/http/send-json-stream';
import { OrdersService } from './orders.service';
import { ParseOrderIdPipe } from './parse-order-id.pipe';

@Controller({ path: 'store/orders', version: '1' })
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    @InjectPinoLogger(OrdersController.name) private readonly logger: PinoLogger,
  ) {}

  @Get()
  async listOrders(@Res() res: Response): Promise<void> {
    sendJsonStream(res, await this.orders.listAsJson(), (err) =>
      this.logger.error({ err, reqId: res.req.id }, 'order list broken off mid-stream'),
    );
  }

  @Delete(':orderId')
  @HttpCode(HttpStatus.NO_CONTENT)
  cancelOrder(@Param('orderId', ParseOrderIdPipe) orderId: string): Promise<void> {
    return this.orders.cancel(orderId);
  }
}
