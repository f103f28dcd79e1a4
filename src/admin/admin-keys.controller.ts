import {
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Post,
  Query,
  VERSION_NEUTRAL,
} from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam } from '@nestjs/swagger';
import type { AuditActor } from '../audit/audit-event';
import { auditPageJson, InvalidAuditQueryError } from '../audit/audit-trail';
import {
  AmbiguousKeyIdError,
  InvalidKeyRequestError,
  isUuid,
  KeyNotFoundError,
  RevokedKeyError,
} from '../auth/api-keys.repository';
import { DEFAULT_GRACE_MS, KeysService } from '../auth/keys.service';
import { RequestActor } from '../auth/request-actor.decorator';
import { KEYS_ADMIN, RequireScope, scopesProblem } from '../auth/scopes';
import { ApiException } from '../common/errors/api.exception';
import { CommonErrors } from '../common/errors/error-code';
import { parseRfc3339 } from '../common/rfc3339';
import { planLimitsProblem } from '../plans/plans';
import { ApiOperationResponses } from '../openapi/api-responses.decorator';
import { adminBodyPipe, JsonBody, noBodyPipe } from '../admin-routes/admin-body.pipe';
import { CreateKeyBody, RotateKeyBody } from './admin-key-bodies';
import {
  adminIssuedKeyJson,
  AdminIssuedKeySchema,
  adminKeyJson,
  AdminKeyListSchema,
  AdminKeySchema,
} from './admin-key.json';
import { AdminErrors } from '../admin-routes/admin.errors';
import { parseAuditQuery } from './audit-query';
import { AdminAuditPageSchema } from './admin-audit.schema';

const invalidBody = (message: string): ApiException =>
  new ApiException(AdminErrors.INVALID_BODY, message);

/** The keys service's refusals, as the admin API answers them. */
function answerOf(error: unknown, id?: string): unknown {
  if (error instanceof KeyNotFoundError || error instanceof AmbiguousKeyIdError) {
    return new ApiException(AdminErrors.KEY_NOT_FOUND, `No key with id ${id ?? ''}`);
  }
  // The keys tool refuses it too (a usage error): a revoked key is never replaced.
  if (error instanceof RevokedKeyError) {
    return new ApiException(
      AdminErrors.KEY_REVOKED,
      `Key ${error.id} is revoked: issue a new one (POST /admin/v1/keys)`,
    );
  }
  if (error instanceof InvalidKeyRequestError) return invalidBody(error.message);
  return error;
}

/**
 * Runs the keys service's call; its refusals become the API's errors. A path's id is a whole
 * UUID: the keys tool's short prefixes are for people typing, never matched over HTTP.
 */
async function answered<T>(call: () => Promise<T>, id?: string): Promise<T> {
  if (id !== undefined && !isUuid(id)) throw answerOf(new KeyNotFoundError(id), id);
  try {
    return await call();
  } catch (error) {
    throw answerOf(error, id);
  }
}

/** The 404 of every operation on one key. */
const NO_SUCH_KEY = {
  description: 'No key with this id.',
  codes: [AdminErrors.KEY_NOT_FOUND],
};

/** The admin API's operations that take a body: the common 413's description says none does. */
const BODY_TOO_LARGE = {
  description: 'A request body over 16 KiB.',
  codes: [CommonErrors.PAYLOAD_TOO_LARGE],
};

const ID_PARAM = ApiParam({ name: 'id', description: "The key's id (a UUID).", format: 'uuid' });

/**
 * The admin API: a thin HTTP layer over the keys service, which the keys tool
 * calls too. Served only by the admin listener; every route needs a key with `keys:admin`.
 * Its paths carry their own version (`/admin/v1/...`): URI versioning would put it first.
 */
@RequireScope(KEYS_ADMIN)
@Controller({ path: 'admin/v1', version: VERSION_NEUTRAL })
export class AdminKeysController {
  constructor(private readonly keys: KeysService) {}

  @Get('keys')
  @ApiOperation({ operationId: 'listKeys', summary: 'List every key, oldest first' })
  @ApiOperationResponses({
    [HttpStatus.OK]: { description: 'Every key.', type: AdminKeyListSchema },
  })
  async list(): Promise<{ data: Record<string, unknown>[] }> {
    const now = Date.now();
    return { data: (await this.keys.list()).map((key) => adminKeyJson(key, now)) };
  }

  @Get('keys/:id')
  @ID_PARAM
  @ApiOperation({ operationId: 'showKey', summary: 'One key' })
  @ApiOperationResponses({
    [HttpStatus.OK]: { description: 'The key.', type: AdminKeySchema },
    [HttpStatus.NOT_FOUND]: NO_SUCH_KEY,
  })
  async show(@Param('id') id: string): Promise<Record<string, unknown>> {
    return adminKeyJson((await answered(() => this.keys.show(id), id)).key);
  }

  @Post('keys')
  @ApiOperation({
    operationId: 'createKey',
    summary: 'Issue a key',
    description:
      'Issues a key and answers it with its secret in `key`, shown this once. Enterprise keys ' +
      'need both `perMinute` and `perDay`; other plans have fixed limits. Without `scopes` the ' +
      'key has every scope but `keys:admin`, which is granted only by name.',
  })
  @ApiBody({ type: CreateKeyBody })
  @ApiOperationResponses({
    [HttpStatus.CREATED]: { description: 'The key, with its secret.', type: AdminIssuedKeySchema },
    [HttpStatus.BAD_REQUEST]: {
      description: 'The body is not valid (the message names the field).',
      codes: [AdminErrors.INVALID_BODY],
    },
    [HttpStatus.PAYLOAD_TOO_LARGE]: BODY_TOO_LARGE,
  })
  async create(
    @JsonBody(adminBodyPipe) body: CreateKeyBody,
    @RequestActor() actor: AuditActor,
  ): Promise<Record<string, unknown>> {
    const limits =
      body.perMinute === undefined && body.perDay === undefined
        ? undefined
        : { perMinute: body.perMinute, perDay: body.perDay };
    const limitsWrong = planLimitsProblem(body.plan, limits, {
      perMinute: 'perMinute',
      perDay: 'perDay',
    });
    if (limitsWrong !== undefined) throw invalidBody(limitsWrong);
    const scopesWrong = body.scopes && scopesProblem(body.scopes);
    if (scopesWrong) throw invalidBody(`scopes: ${scopesWrong}`);
    let expiresAt: Date | undefined;
    if (body.expiresAt !== undefined) {
      const instant = parseRfc3339(body.expiresAt);
      if (instant === undefined) {
        throw invalidBody(
          'expiresAt must be an RFC 3339 time with an offset, e.g. 2027-03-01T00:00:00Z',
        );
      }
      expiresAt = new Date(instant);
    }
    const issued = await answered(() =>
      this.keys.create(
        {
          plan: body.plan,
          name: body.name,
          limits: limits as { perMinute: number; perDay: number } | undefined,
          expiresAt,
          scopes: body.scopes,
        },
        actor,
      ),
    ).catch((error: unknown) => {
      // The repository's own checks (the expiry in the future) name no field.
      if (error instanceof ApiException && error.code === AdminErrors.INVALID_BODY.code) {
        throw invalidBody(`expiresAt: ${error.message}`);
      }
      throw error;
    });
    return adminIssuedKeyJson(issued);
  }

  @Post('keys/:id/rotate')
  @ID_PARAM
  @ApiOperation({
    operationId: 'rotateKey',
    summary: 'Rotate a key',
    description:
      'Issues a replacement (same name, plan, limits and scopes) and answers it with its secret ' +
      'in `key`, shown this once. The old key keeps working for `graceSeconds`.',
  })
  @ApiBody({ type: RotateKeyBody, required: false })
  @ApiOperationResponses({
    [HttpStatus.CREATED]: {
      description: 'The new key, with its secret.',
      type: AdminIssuedKeySchema,
    },
    [HttpStatus.BAD_REQUEST]: {
      description: 'The body is not valid (the message names the field).',
      codes: [AdminErrors.INVALID_BODY],
    },
    [HttpStatus.NOT_FOUND]: NO_SUCH_KEY,
    [HttpStatus.CONFLICT]: {
      description: 'The key is revoked: issue a new one (the keys tool refuses it too).',
      codes: [AdminErrors.KEY_REVOKED],
    },
    [HttpStatus.PAYLOAD_TOO_LARGE]: BODY_TOO_LARGE,
  })
  async rotate(
    @Param('id') id: string,
    @JsonBody(adminBodyPipe) body: RotateKeyBody,
    @RequestActor() actor: AuditActor,
  ): Promise<Record<string, unknown>> {
    const graceMs = body.graceSeconds === undefined ? DEFAULT_GRACE_MS : body.graceSeconds * 1000;
    const rotation = await answered(() => this.keys.rotate(id, { graceMs }, actor), id);
    return adminIssuedKeyJson(rotation.issued);
  }

  @Delete('keys/:id')
  @ID_PARAM
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    operationId: 'revokeKey',
    summary: 'Revoke a key',
    description:
      'The key is refused on every instance within 10 seconds. Revoking a revoked key is a 204 too.',
  })
  @ApiOperationResponses({
    [HttpStatus.NO_CONTENT]: { description: 'Revoked.' },
    [HttpStatus.NOT_FOUND]: NO_SUCH_KEY,
  })
  async revoke(@Param('id') id: string, @RequestActor() actor: AuditActor): Promise<void> {
    await answered(() => this.keys.revoke(id, actor), id);
  }

  @Post('keys/:id/unban')
  @ID_PARAM
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    operationId: 'unbanKey',
    summary: "Lift a key's rate-limit ban",
    description: 'Lifts the ban of the key and the other keys of its rotation family.',
  })
  @ApiOperationResponses({
    [HttpStatus.NO_CONTENT]: { description: 'Not banned (any more).' },
    [HttpStatus.BAD_REQUEST]: {
      description: 'A body with a field: this operation takes none (the message names it).',
      codes: [AdminErrors.INVALID_BODY],
    },
    [HttpStatus.NOT_FOUND]: NO_SUCH_KEY,
    [HttpStatus.PAYLOAD_TOO_LARGE]: BODY_TOO_LARGE,
  })
  async unban(
    @Param('id') id: string,
    @JsonBody(noBodyPipe) _body: object,
    @RequestActor() actor: AuditActor,
  ): Promise<void> {
    await answered(() => this.keys.unban(id, actor), id);
  }

  @Get('audit')
  @ApiOperation({
    operationId: 'listAuditEvents',
    summary: 'The audit trail, newest first',
    description:
      'Pages of events, newest first. Filters (`action`, `actor`, `target`) are exact and ' +
      'combined; pass `nextCursor` as `cursor` with the same filters for the next page.',
  })
  @ApiOperationResponses({
    [HttpStatus.OK]: { description: 'A page of events.', type: AdminAuditPageSchema },
    [HttpStatus.BAD_REQUEST]: {
      description: 'A query parameter is unknown, repeated or out of its rules (named).',
      codes: [AdminErrors.INVALID_QUERY],
    },
  })
  async audit(@Query() query: Record<string, unknown>): Promise<object> {
    const page = await this.keys.audit(parseAuditQuery(query)).catch((error: unknown) => {
      throw error instanceof InvalidAuditQueryError
        ? new ApiException(AdminErrors.INVALID_QUERY, error.message)
        : error;
    });
    return auditPageJson(page);
  }
}
