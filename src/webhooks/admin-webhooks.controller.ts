import {
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Query,
  VERSION_NEUTRAL,
} from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuditActor } from '../audit/audit-event';
import { RequestActor } from '../auth/request-actor.decorator';
import { RequireScope } from '../auth/scopes';
import { ApiException } from '../common/errors/api.exception';
import { CommonErrors, errorCodeForStatus } from '../common/errors/error-code';
import { ApiOperationResponses } from '../openapi/api-responses.decorator';
import {
  DEFAULT_GRACE_SECONDS,
  DeliveryNotFoundError,
  InvalidDeliveryQueryError,
  InvalidWebhookRequestError,
  isDeliveryStatus,
  MAX_PAGE,
  WebhookLimitError,
  WebhookNotFoundError,
  WebhooksService,
} from './webhooks.service';
import { WebhookErrors } from './webhooks.errors';
import { WebhookScopes } from './webhooks.scopes';
import { adminBodyPipe, JsonBody, noBodyPipe } from '../admin-routes/admin-body.pipe';
import {
  ChangeWebhookBody,
  CreateWebhookBody,
  RotateWebhookSecretBody,
} from './admin-webhook-bodies';
import {
  AdminWebhookDeliveryPageSchema,
  AdminWebhookDeliverySchema,
  AdminWebhookListSchema,
  AdminWebhookSchema,
  AdminWebhookWithSecretSchema,
} from './admin-webhook.schema';
import { AdminErrors } from '../admin-routes/admin.errors';

/** A new endpoint past the service's limit: a plain 409, as a stock `ConflictException`. */
const LIMIT_REACHED = errorCodeForStatus(HttpStatus.CONFLICT);

/** The service's refusals, as the admin API answers them. */
async function answered<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof WebhookNotFoundError) {
      throw new ApiException(WebhookErrors.WEBHOOK_NOT_FOUND, error.message);
    }
    if (error instanceof DeliveryNotFoundError) {
      throw new ApiException(WebhookErrors.DELIVERY_NOT_FOUND, error.message);
    }
    if (error instanceof WebhookLimitError) {
      throw new ApiException(LIMIT_REACHED, error.message);
    }
    if (error instanceof InvalidWebhookRequestError) {
      throw new ApiException(AdminErrors.INVALID_BODY, error.message);
    }
    if (error instanceof InvalidDeliveryQueryError) {
      throw new ApiException(AdminErrors.INVALID_QUERY, error.message);
    }
    throw error;
  }
}

const invalidQuery = (message: string): ApiException =>
  new ApiException(AdminErrors.INVALID_QUERY, message);

const DELIVERY_PARAMETERS = ['status', 'limit', 'cursor'] as const;

/** The deliveries' query: each parameter once, none unknown or empty, values in their rules. */
function parseDeliveryQuery(query: Record<string, unknown>): {
  status?: string;
  limit?: number;
  cursor?: string;
} {
  const parsed: { status?: string; limit?: number; cursor?: string } = {};
  for (const [name, value] of Object.entries(query)) {
    if (!(DELIVERY_PARAMETERS as readonly string[]).includes(name)) {
      throw invalidQuery(
        `unknown query parameter ${name}: the parameters are ${DELIVERY_PARAMETERS.join(', ')}`,
      );
    }
    if (typeof value !== 'string') throw invalidQuery(`${name} must be given once`);
    if (value === '') throw invalidQuery(`${name} needs a value`);
    if (name === 'limit') {
      const limit = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
      if (!(limit >= 1 && limit <= MAX_PAGE)) {
        throw invalidQuery(`limit must be a whole number from 1 to ${MAX_PAGE}; got "${value}"`);
      }
      parsed.limit = limit;
    } else if (name === 'status') {
      if (!isDeliveryStatus(value)) {
        throw invalidQuery(`status must be pending, delivered or failed; got "${value}"`);
      }
      parsed.status = value;
    } else {
      parsed.cursor = value;
    }
  }
  return parsed;
}

const NO_SUCH_WEBHOOK = {
  description: 'No endpoint with this id.',
  codes: [WebhookErrors.WEBHOOK_NOT_FOUND],
};

const INVALID = {
  description: 'The body is not valid (the message names the field).',
  codes: [AdminErrors.INVALID_BODY],
};

const NO_BODY = {
  description: 'A body with a field: this operation takes none (the message names it).',
  codes: [AdminErrors.INVALID_BODY],
};

const BODY_TOO_LARGE = {
  description: 'A request body over 16 KiB.',
  codes: [CommonErrors.PAYLOAD_TOO_LARGE],
};

const ID_PARAM = ApiParam({
  name: 'id',
  description: "The endpoint's id (a UUID).",
  format: 'uuid',
});

/**
 * Webhook endpoints and their deliveries: a thin HTTP layer over the webhooks module's service.
 * Served only by the admin listener; every route needs a key with `webhooks:admin`.
 */
@ApiTags('webhooks')
@RequireScope(WebhookScopes.ADMIN)
@Controller({ path: 'admin/v1/webhooks', version: VERSION_NEUTRAL })
export class AdminWebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @ApiOperation({ operationId: 'listWebhooks', summary: 'List the endpoints, oldest first' })
  @ApiOperationResponses({
    [HttpStatus.OK]: { description: 'Every endpoint.', type: AdminWebhookListSchema },
  })
  async list(): Promise<{ data: Record<string, unknown>[] }> {
    return { data: await this.webhooks.list() };
  }

  @Get(':id')
  @ID_PARAM
  @ApiOperation({ operationId: 'showWebhook', summary: 'One endpoint' })
  @ApiOperationResponses({
    [HttpStatus.OK]: { description: 'The endpoint.', type: AdminWebhookSchema },
    [HttpStatus.NOT_FOUND]: NO_SUCH_WEBHOOK,
  })
  async show(@Param('id') id: string): Promise<Record<string, unknown>> {
    return await answered(() => this.webhooks.show(id));
  }

  @Post()
  @ApiOperation({
    operationId: 'createWebhook',
    summary: 'Add an endpoint',
    description:
      'Adds an endpoint and answers it with its signing secret in `secret`, shown this once.',
  })
  @ApiBody({ type: CreateWebhookBody })
  @ApiOperationResponses({
    [HttpStatus.CREATED]: {
      description: 'The endpoint, with its secret.',
      type: AdminWebhookWithSecretSchema,
    },
    [HttpStatus.BAD_REQUEST]: INVALID,
    [HttpStatus.CONFLICT]: {
      description: 'The service already holds `WEBHOOK_MAX_ENDPOINTS` endpoints.',
      codes: [LIMIT_REACHED],
    },
    [HttpStatus.PAYLOAD_TOO_LARGE]: BODY_TOO_LARGE,
  })
  async create(
    @JsonBody(adminBodyPipe) body: CreateWebhookBody,
    @RequestActor() actor: AuditActor,
  ): Promise<Record<string, unknown>> {
    return await answered(() => this.webhooks.create(body, actor));
  }

  @Patch(':id')
  @ID_PARAM
  @ApiOperation({ operationId: 'changeWebhook', summary: 'Change an endpoint' })
  @ApiBody({ type: ChangeWebhookBody })
  @ApiOperationResponses({
    [HttpStatus.OK]: { description: 'The endpoint.', type: AdminWebhookSchema },
    [HttpStatus.BAD_REQUEST]: INVALID,
    [HttpStatus.NOT_FOUND]: NO_SUCH_WEBHOOK,
    [HttpStatus.PAYLOAD_TOO_LARGE]: BODY_TOO_LARGE,
  })
  async change(
    @Param('id') id: string,
    @JsonBody(adminBodyPipe) body: ChangeWebhookBody,
    @RequestActor() actor: AuditActor,
  ): Promise<Record<string, unknown>> {
    return await answered(() => this.webhooks.change(id, body, actor));
  }

  @Delete(':id')
  @ID_PARAM
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    operationId: 'removeWebhook',
    summary: 'Remove an endpoint',
    description: 'Its pending deliveries are dropped. Removing it again is a 204 too.',
  })
  @ApiOperationResponses({
    [HttpStatus.NO_CONTENT]: { description: 'Removed.' },
    [HttpStatus.NOT_FOUND]: NO_SUCH_WEBHOOK,
  })
  async remove(@Param('id') id: string, @RequestActor() actor: AuditActor): Promise<void> {
    await answered(() => this.webhooks.remove(id, actor));
  }

  @Post(':id/rotate-secret')
  @ID_PARAM
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: "Replace an endpoint's secret",
    description:
      'Answers the endpoint with its new secret in `secret`, shown this once. Until `graceSeconds` ends, messages carry a signature by each secret.',
  })
  @ApiBody({ type: RotateWebhookSecretBody, required: false })
  @ApiOperationResponses({
    [HttpStatus.CREATED]: {
      description: 'The endpoint, with its new secret.',
      type: AdminWebhookWithSecretSchema,
    },
    [HttpStatus.BAD_REQUEST]: INVALID,
    [HttpStatus.NOT_FOUND]: NO_SUCH_WEBHOOK,
    [HttpStatus.PAYLOAD_TOO_LARGE]: BODY_TOO_LARGE,
  })
  async rotateSecret(
    @Param('id') id: string,
    @JsonBody(adminBodyPipe) body: RotateWebhookSecretBody,
    @RequestActor() actor: AuditActor,
  ): Promise<Record<string, unknown>> {
    const grace = body.graceSeconds ?? DEFAULT_GRACE_SECONDS;
    return await answered(() => this.webhooks.rotateSecret(id, grace, actor));
  }

  @Get(':id/deliveries')
  @ID_PARAM
  @ApiOperation({
    operationId: 'listWebhookDeliveries',
    summary: "An endpoint's deliveries, newest first",
    description:
      'Pages of deliveries, newest first, of one `status` if given; pass `nextCursor` as `cursor` with the same filter for the next page.',
  })
  @ApiOperationResponses({
    [HttpStatus.OK]: { description: 'A page of deliveries.', type: AdminWebhookDeliveryPageSchema },
    [HttpStatus.BAD_REQUEST]: {
      description: 'A query parameter is unknown, repeated or out of its rules (named).',
      codes: [AdminErrors.INVALID_QUERY],
    },
    [HttpStatus.NOT_FOUND]: NO_SUCH_WEBHOOK,
  })
  async deliveries(
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ): Promise<object> {
    const parsed = parseDeliveryQuery(query);
    return await answered(() => this.webhooks.deliveries(id, parsed));
  }

  @Post(':id/deliveries/:deliveryId/retry')
  @ID_PARAM
  @ApiParam({ name: 'deliveryId', description: "The delivery's id (a UUID).", format: 'uuid' })
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({
    operationId: 'retryWebhookDelivery',
    summary: 'Send a delivery again',
    description: "A new attempt now, whatever the delivery's status.",
  })
  @ApiOperationResponses({
    [HttpStatus.ACCEPTED]: {
      description: 'The delivery, pending.',
      type: AdminWebhookDeliverySchema,
    },
    [HttpStatus.BAD_REQUEST]: NO_BODY,
    [HttpStatus.NOT_FOUND]: {
      description: 'No endpoint, or no delivery of it, with this id.',
      codes: [WebhookErrors.WEBHOOK_NOT_FOUND, WebhookErrors.DELIVERY_NOT_FOUND],
    },
    [HttpStatus.PAYLOAD_TOO_LARGE]: BODY_TOO_LARGE,
  })
  async retry(
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
    @JsonBody(noBodyPipe) _body: object,
  ): Promise<Record<string, unknown>> {
    return await answered(() => this.webhooks.retry(id, deliveryId));
  }

  @Post(':id/test')
  @ID_PARAM
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({
    operationId: 'testWebhook',
    summary: 'Send a test message',
    description: 'A `webhook.test` message to this endpoint alone; its object is the Endpoint.',
  })
  @ApiOperationResponses({
    [HttpStatus.ACCEPTED]: {
      description: 'The delivery, pending.',
      type: AdminWebhookDeliverySchema,
    },
    [HttpStatus.BAD_REQUEST]: NO_BODY,
    [HttpStatus.NOT_FOUND]: NO_SUCH_WEBHOOK,
    [HttpStatus.PAYLOAD_TOO_LARGE]: BODY_TOO_LARGE,
  })
  async test(
    @Param('id') id: string,
    @JsonBody(noBodyPipe) _body: object,
  ): Promise<Record<string, unknown>> {
    return await answered(() => this.webhooks.test(id));
  }
}
