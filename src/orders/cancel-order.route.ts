import { applyDecorators, Delete, HttpCode, HttpStatus, Param } from '@nestjs/common';
import { RequireScope } from '../auth/scopes';
import { OrderScopes } from './order.scopes';
import { ApiCancelOrder } from './orders.openapi';
import { ParseOrderIdPipe } from './parse-order-id.pipe';

/**
 * `DELETE /store/orders/{orderId}`: the same operation in v1 and v2, declared once for both
 * controllers (its scope, status and documentation); each handler only hands the order to
 * `OrdersService.cancel`.
 */
export const CancelOrderRoute = (): MethodDecorator =>
  applyDecorators(
    RequireScope(OrderScopes.CANCEL),
    Delete(':orderId'),
    HttpCode(HttpStatus.NO_CONTENT),
    ApiCancelOrder(),
  );

/** The path's `orderId`, as the exact decimal string of an int64 (else `400 INVALID_ORDER_ID`). */
export const OrderIdParam = (): ParameterDecorator => Param('orderId', ParseOrderIdPipe);
