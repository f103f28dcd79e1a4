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
  /** v2's list: a query parameter unknown, repeated or out of its rules (the message names it). */
  INVALID_QUERY: {
    status: HttpStatus.BAD_REQUEST,
    message: 'A query parameter is unknown, repeated or out of its rules',
  },
  /** v2's list: a cursor malformed, altered, or issued for other filters or another sort. */
  INVALID_CURSOR: {
    status: HttpStatus.BAD_REQUEST,
    message: 'The cursor is malformed, or was issued for other filters or another sort',
  },
});
