import { Controller, Delete, Get, HttpCode, HttpStatus, Param, Res } from '@nestjs/common';
import { ApiOperation, ApiParam } from '@nestjs/swagger';
import type { Response } from 'express';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { CommonErrors } from '../common/errors/error-code';
import { sendJsonStream } from '../common/http/send-json-stream';
import { ApiOperationResponses } from '../openapi/api-responses.decorator';
import { ApiTag } from '../openapi/api-tag.decorator';
import { OrderErrors } from './order.errors';
import { OrderSchema } from './order.schema';
import { OrdersService } from './orders.service';
import { ParseOrderIdPipe } from './parse-order-id.pipe';

@ApiTag({
  name: 'orders',
  description: "Place and manage customer orders: list the store's orders, cancel one.",
})
@Controller({ path: 'store/orders', version: '1' })
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    @InjectPinoLogger(OrdersController.name) private readonly logger: PinoLogger,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'listOrders',
    summary: 'List orders',
    description:
      'Every order placed in the store, in every status, by id ascending, in one response ' +
      '(filtering and pagination come with v2). The array is streamed as rows arrive: a list ' +
      'cut off before its closing `]` is incomplete and must not be used.',
  })
  @ApiOperationResponses({
    [HttpStatus.OK]: { description: 'Every order of the store.', type: [OrderSchema] },
  })
  async listOrders(@Res() res: Response): Promise<void> {
    sendJsonStream(res, await this.orders.listAsJson(), (err) =>
      this.logger.error({ err, reqId: res.req.id }, 'order list broken off mid-stream'),
    );
  }

  @Delete(':orderId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    operationId: 'cancelOrder',
    summary: 'Cancel an order',
    description:
      'Cancels a pending order. Cancelling an order that is already cancelled succeeds and ' +
      'changes nothing (DELETE is idempotent); a shipped order cannot be cancelled.',
  })
  @ApiParam({
    name: 'orderId',
    required: true,
    description: 'The identifier of the order to cancel: a base-10 int64.',
    schema: { type: 'integer', format: 'int64' },
  })
  @ApiOperationResponses({
    [HttpStatus.NO_CONTENT]: { description: 'The order is cancelled (or already was).' },
    [HttpStatus.BAD_REQUEST]: {
      description:
        '`orderId` is not a base-10 int64 (`INVALID_ORDER_ID`), or the request is malformed.',
      codes: [OrderErrors.INVALID_ORDER_ID, CommonErrors.BAD_REQUEST],
    },
    [HttpStatus.NOT_FOUND]: {
      description: 'No order with this id exists.',
      codes: [OrderErrors.ORDER_NOT_FOUND],
    },
    [HttpStatus.CONFLICT]: {
      description: 'The order has already shipped: it cannot be cancelled, and nothing changed.',
      codes: [OrderErrors.ORDER_ALREADY_SHIPPED],
    },
  })
  cancelOrder(@Param('orderId', ParseOrderIdPipe) orderId: string): Promise<void> {
    return this.orders.cancel(orderId);
  }
}
