import { applyDecorators, HttpStatus } from '@nestjs/common';
import { ApiOperation, ApiParam } from '@nestjs/swagger';
import { ErrorCode } from '../common/errors/error-code';
import { ApiOperationResponses } from '../openapi/api-responses.decorator';

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
        codes: [ErrorCode.INVALID_ORDER_ID, ErrorCode.BAD_REQUEST],
      },
      [HttpStatus.NOT_FOUND]: {
        description: 'No order with this id exists.',
        codes: [ErrorCode.ORDER_NOT_FOUND],
      },
      [HttpStatus.CONFLICT]: {
        description: 'The order has already shipped: it cannot be cancelled, and nothing changed.',
        codes: [ErrorCode.ORDER_ALREADY_SHIPPED],
      },
    }),
  );
