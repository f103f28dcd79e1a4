import { HttpStatus } from '@nestjs/common';
import { defineErrorCodes } from '../common/errors/error-code';

/** The errors of the orders API. */
export const OrderErrors = defineErrorCodes({
  INVALID_ORDER_ID: {
    status: HttpStatus.BAD_REQUEST,
    message: 'orderId must be a base-10 integer in the int64 range',
  },
  ORDER_NOT_FOUND: { status: HttpStatus.NOT_FOUND, message: 'No order with this id exists' },
  ORDER_ALREADY_SHIPPED: {
    status: HttpStatus.CONFLICT,
    message: 'The order cannot be cancelled because it has already shipped',
  },
});
