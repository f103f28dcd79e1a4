import { HttpStatus } from '@nestjs/common';
import { defineErrorCodes } from '../common/errors/error-code';

/** The errors of the orders API. */
export const OrderErrors = defineErrorCodes({
  INVALID_ORDER_ID: {
    status: HttpStatus.BAD_REQUEST,
    message: 'orderId must be a base-10 integer in the int64 range',
    when: '`orderId` is not an int64',
  },
  ORDER_NOT_FOUND: {
    status: HttpStatus.NOT_FOUND,
    message: 'No order with this id exists',
    when: 'cancel of an id that does not exist',
  },
  ORDER_ALREADY_SHIPPED: {
    status: HttpStatus.CONFLICT,
    message: 'The order cannot be cancelled because it has already shipped',
    when: 'cancel of a shipped order',
  },
  INVALID_QUERY: {
    status: HttpStatus.BAD_REQUEST,
    message: 'A query parameter is unknown, repeated or out of its rules',
    when: 'v2 list: an unknown, repeated, empty or malformed parameter (see [Version 2](#version-2-the-list-filtered-sorted-and-paged))',
  },
  INVALID_CURSOR: {
    status: HttpStatus.BAD_REQUEST,
    message: 'The cursor is malformed, or was issued for other filters or another sort',
    when: 'v2 list: a cursor altered, made by hand, from another deployment, or used with other filters or another sort',
  },
});
