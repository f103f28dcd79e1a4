import { Injectable, PipeTransform } from '@nestjs/common';
import { ApiException } from '../common/errors/api.exception';
import { parseInt64 } from '../common/int64';
import { OrderErrors } from './order.errors';

/**
 * `orderId` as the exact decimal string of an int64. Nest's ParseIntPipe would round
 * 9007199254740993 to 9007199254740992 and cancel the wrong order.
 */
@Injectable()
export class ParseOrderIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    const id = parseInt64(value);
    if (id === undefined) throw new ApiException(OrderErrors.INVALID_ORDER_ID);
    return id;
  }
}
