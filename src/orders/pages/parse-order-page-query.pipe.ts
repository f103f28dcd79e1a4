import { Injectable, PipeTransform } from '@nestjs/common';
import { OrderPageQuery, parseOrderPageQuery } from './order-page-query';

/** The raw query string of `GET /v2/store/orders` (see `@RawQuery()`), parsed strictly. */
@Injectable()
export class ParseOrderPageQueryPipe implements PipeTransform<string, OrderPageQuery> {
  transform(search: string): OrderPageQuery {
    return parseOrderPageQuery(search);
  }
}
