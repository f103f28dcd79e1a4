import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Response } from 'express';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import type { AuditActor } from '../audit/audit-event';
import { RequestActor } from '../auth/request-actor.decorator';
import { constantHeaderSetter } from '../platform/response-header';
import { JsonStreamSender } from '../common/http/send-json-stream';
import { ApiOperationResponses } from '../openapi/api-responses.decorator';
import { ApiTag } from '../openapi/api-tag.decorator';
import { RequireScope } from '../auth/scopes';
import { OrderScopes } from './order.scopes';
import { CancelOrderRoute, OrderIdParam } from './cancel-order.route';
import { ApiVersionDocument } from '../openapi/api-version-document.decorator';
import { ORDERS_TAG } from './orders.openapi';
import { V1_DOCUMENT } from './orders.documents';
import { OrderSchema } from './order.schema';
import { OrdersService } from './orders.service';

/** v1's list has a successor (RFC 5829): the filtered, paged list of v2. */
const SUCCESSOR_VERSION_LINK = '</v2/store/orders>; rel="successor-version"';
const setSuccessorVersionLink = constantHeaderSetter('Link', SUCCESSOR_VERSION_LINK);

@ApiTag(ORDERS_TAG)
@ApiVersionDocument(V1_DOCUMENT)
@Controller({ path: 'store/orders', version: '1' })
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly sender: JsonStreamSender,
    @InjectPinoLogger(OrdersController.name) private readonly logger: PinoLogger,
  ) {}

  @RequireScope(OrderScopes.READ)
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
    [HttpStatus.OK]: {
      description: 'Every order of the store.',
      type: [OrderSchema],
      headers: {
        Link: {
          description:
            'The successor of this operation (RFC 5829): ' +
            '`</v2/store/orders>; rel="successor-version"`, filtered and paged.',
          schema: { type: 'string' },
          required: true,
        },
      },
    },
  })
  async listOrders(@Res() res: Response): Promise<void> {
    setSuccessorVersionLink(res);
    // The list is read only for a GET: a HEAD is answered its head without it.
    await this.sender.send(res, () => this.orders.listAsJson(), {
      onError: (err) => {
        this.logger.error({ err, reqId: res.req.id }, 'order list broken off mid-stream');
      },
      // The client's doing, not a fault of the service: one line, no stack.
      onStall: (stalledMs) => {
        this.logger.warn(
          { reqId: res.req.id, stalledMs },
          `order list cut off: the client took none of it for ${stalledMs} ms`,
        );
      },
    });
  }

  @CancelOrderRoute()
  cancelOrder(@OrderIdParam() orderId: string, @RequestActor() by: AuditActor): Promise<void> {
    return this.orders.cancel(orderId, by);
  }
}
