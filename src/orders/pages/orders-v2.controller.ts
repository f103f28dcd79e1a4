import { CommonErrors } from '../../common/errors/error-code';
import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiOperation, ApiQuery } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuditActor } from '../../audit/audit-event';
import { RequestActor } from '../../auth/request-actor.decorator';
import { OrderErrors } from '../order.errors';
import { RawQuery } from '../../common/http/raw-query.decorator';
import { ApiOperationResponses } from '../../openapi/api-responses.decorator';
import { ApiTag } from '../../openapi/api-tag.decorator';
import { RequireScope } from '../../auth/scopes';
import { OrderScopes } from '../order.scopes';
import { CancelOrderRoute, OrderIdParam } from '../cancel-order.route';
import { ApiVersionDocument } from '../../openapi/api-version-document.decorator';
import { ORDERS_TAG } from '../orders.openapi';
import { V2_DOCUMENT } from '../orders.documents';
import { sendOrderPage } from './order-page';
import { type OrderPageQuery } from './order-page-query';
import { OrderPageSchema } from './order-page.schema';
import { OrderPagesService } from './order-pages.service';
import { ORDER_PAGE_QUERY_PARAMETERS } from './order-page.openapi';
import { OrdersService } from '../orders.service';
import { ParseOrderPageQueryPipe } from './parse-order-page-query.pipe';

/** Version 2 of the orders API: the list filtered, sorted and paged; cancel as in v1. */
@ApiTag(ORDERS_TAG)
@ApiVersionDocument(V2_DOCUMENT)
@Controller({ path: 'store/orders', version: '2' })
export class OrdersV2Controller {
  constructor(
    private readonly pages: OrderPagesService,
    private readonly orders: OrdersService,
  ) {}

  @RequireScope(OrderScopes.READ)
  @Get()
  @ApiOperation({
    operationId: 'listOrders',
    summary: 'List orders, one page at a time',
    description:
      'The orders that match every given filter, in the requested sort, one page at a time. ' +
      'Pages are found by keyset (the cursor), so every page costs the same however deep, and ' +
      'each examines a bounded number of orders whatever the filters: where few orders match, ' +
      'a page may hold fewer than `limit`, even none, with `hasMore` true and a `nextCursor` ' +
      'that continues the scan (walk until `hasMore` is false). ' +
      'Walking all pages visits exactly once, in sort order, every order that matched throughout ' +
      'the walk and whose sort key did not change, whatever is placed, cancelled or shipped ' +
      'meanwhile (an order that changes status may enter or leave a status filter). A page with ' +
      'more to come carries `Link: <next page>; rel="next"` and `nextCursor`.',
  })
  @ApiQuery(ORDER_PAGE_QUERY_PARAMETERS.status)
  @ApiQuery(ORDER_PAGE_QUERY_PARAMETERS.petId)
  @ApiQuery(ORDER_PAGE_QUERY_PARAMETERS.complete)
  @ApiQuery(ORDER_PAGE_QUERY_PARAMETERS.shipDateFrom)
  @ApiQuery(ORDER_PAGE_QUERY_PARAMETERS.shipDateTo)
  @ApiQuery(ORDER_PAGE_QUERY_PARAMETERS.sort)
  @ApiQuery(ORDER_PAGE_QUERY_PARAMETERS.limit)
  @ApiQuery(ORDER_PAGE_QUERY_PARAMETERS.cursor)
  @ApiOperationResponses({
    [HttpStatus.OK]: {
      description: 'One page of the matching orders.',
      type: OrderPageSchema,
      headers: {
        Link: {
          description:
            'On a page with more to come: `<absolute URL of the next page>; rel="next"` ' +
            '(RFC 8288), the same query with the next cursor.',
          schema: { type: 'string' },
          required: false,
        },
      },
    },
    [HttpStatus.BAD_REQUEST]: {
      description:
        'A query parameter is unknown, repeated, empty or out of its rules (`INVALID_QUERY`, the ' +
        'message names it), or the cursor is malformed, altered, or was issued for other filters ' +
        'or another sort (`INVALID_CURSOR`).',
      codes: [OrderErrors.INVALID_QUERY, OrderErrors.INVALID_CURSOR, CommonErrors.BAD_REQUEST],
    },
  })
  async listOrders(
    @RawQuery(ParseOrderPageQueryPipe) query: OrderPageQuery,
    @Res() res: Response,
  ): Promise<void> {
    sendOrderPage(res, query.search, await this.pages.find(query));
  }

  @CancelOrderRoute()
  cancelOrder(@OrderIdParam() orderId: string, @RequestActor() by: AuditActor): Promise<void> {
    return this.orders.cancel(orderId, by);
  }
}
