import { CommonErrors } from '../common/errors/error-code';
import { applyDecorators, HttpStatus } from '@nestjs/common';
import { ApiOperation, ApiParam } from '@nestjs/swagger';
import { OrderErrors } from './order.errors';
import { ApiOperationResponses } from '../openapi/api-responses.decorator';

/** The orders tag of every version's document. */
export const ORDERS_TAG = {
  name: 'orders',
  description: "Place and manage customer orders: list the store's orders, cancel one.",
};

/** The documentation of `DELETE /store/orders/{orderId}`: the same operation in v1 and v2. */
export const ApiCancelOrder = (): MethodDecorator =>
  applyDecorators(
    ApiOperation({
      operationId: 'cancelOrder',
      summary: 'Cancel an order',
      description:
        'Cancels a pending order. Cancelling an order that is already cancelled succeeds and ' +
        'changes nothing (DELETE is idempotent); a shipped order cannot be cancelled.',
    }),
    ApiParam({
      name: 'orderId',
      required: true,
      description: 'The identifier of the order to cancel: a base-10 int64.',
      schema: { type: 'integer', format: 'int64' },
    }),
    ApiOperationResponses({
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
    }),
  );
