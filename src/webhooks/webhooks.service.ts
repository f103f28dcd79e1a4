import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager, QueryFailedError } from 'typeorm';
import { AUDIT_ACTION_NAMES } from '../audit/audit-actions';
import type { AuditActor } from '../audit/audit-event';
import { AuditTrail } from '../audit/audit-trail';
import { JobQueue } from '../events/job-queue';
import { fromBase64url, toBase64url } from '../common/base64url';
import { isIP } from 'node:net';
import {
  checkedAddresses,
  hostOf,
  RefusedAddressError,
  WebhookResolver,
} from './webhook-addresses';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { deliveryJson, endpointJson, type EndpointRow } from './webhook-json';
import { queueAttempt } from './webhook-queue';
import { newSecret, SecretBox } from './webhook-secrets';
import { WebhookAuditActions, webhookTarget } from './webhook.audit';
import { type WebhooksSettings, webhooksSettings } from './webhooks.settings';

/** The event type of the test route's message, sent to one endpoint only. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** A request's field that is not acceptable; `field` is named in the answer. */
export class InvalidWebhookRequestError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

export class WebhookNotFoundError extends Error {
  constructor(readonly id: string) {
    super(`No webhook endpoint with id ${id}`);
  }
}

export class DeliveryNotFoundError extends Error {
  constructor(readonly id: string) {
    super(`No delivery with id ${id} for this endpoint`);
  }
}

/** A new endpoint past `WEBHOOK_MAX_ENDPOINTS`. */
export class WebhookLimitError extends Error {
  constructor(readonly limit: number) {
    super(
      `This service already has ${limit} webhook endpoints, its limit (WEBHOOK_MAX_ENDPOINTS): remove one first`,
    );
  }
}

/** A query parameter that is not acceptable (named). */
export class InvalidDeliveryQueryError extends Error {}

const badCursor = (): InvalidDeliveryQueryError =>
  new InvalidDeliveryQueryError('cursor is not a cursor this list gave');

/** PostgreSQL's class 22, data exception: a value out of its type (a time that is none). */
const isDataException = (error: unknown): boolean =>
  error instanceof QueryFailedError &&
  /^22/.test(String((error.driverError as { code?: unknown }).code));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;
export const DEFAULT_GRACE_SECONDS = 86400;

/** Every event type an endpoint may subscribe to: the audit trail's actions, and the test's. */
export function eventTypes(): string[] {
  return [...AUDIT_ACTION_NAMES, TEST_EVENT_TYPE];
}

export interface EndpointChange {
  url?: string;
  events?: string[];
  description?: string;
  disabled?: boolean;
}

/**
 * Webhook endpoints and their deliveries, as the admin API manages them. Endpoints are never
 * deleted (the service's role deletes no row): a removed one is marked, no longer listed, and
 * its pending deliveries end. Every change of an endpoint is an audit event (`webhook.*`,
 * never its secret), in the change's transaction.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly deliveryRecords: WebhookDeliveriesRepository,
    @Inject(webhooksSettings.KEY) private readonly settings: WebhooksSettings,
    private readonly resolver: WebhookResolver,
    private readonly secrets: SecretBox,
    private readonly queue: JobQueue,
    private readonly audit: AuditTrail,
  ) {}

  private async audited(
    manager: EntityManager,
    action: string,
    id: string,
    actor: AuditActor,
  ): Promise<void> {
    await this.audit.record(manager, { ...actor, action, target: webhookTarget(id) });
  }

  /** The URL rules: https (http if allowed), no credentials, only public addresses. */
  async checkUrl(text: string): Promise<void> {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new InvalidWebhookRequestError('url', 'must be an absolute URL');
    }
    const allowHttp = this.settings.WEBHOOK_ALLOW_HTTP === 'true';
    if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
      throw new InvalidWebhookRequestError(
        'url',
        `must be an https:// URL${allowHttp ? ' or http://' : ''}`,
      );
    }
    if (url.username !== '' || url.password !== '') {
      throw new InvalidWebhookRequestError('url', 'must not carry a user name or password');
    }
    try {
      await checkedAddresses(
        this.resolver,
        hostOf(url),
        this.settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS === 'true',
      );
    } catch (error) {
      // A name's addresses are not told: what an internal name resolves to is not the caller's.
      const message =
        error instanceof RefusedAddressError && isIP(error.host) === 0
          ? `${error.host} resolves to an address that is not public`
          : (error as Error).message;
      throw new InvalidWebhookRequestError('url', message);
    }
  }

  private checkEvents(events: string[]): string[] {
    const known = new Set(eventTypes());
    if (events.length === 0)
      throw new InvalidWebhookRequestError('events', 'must name at least one event type');
    const unknown = events.find((type) => !known.has(type));
    if (unknown !== undefined) {
      throw new InvalidWebhookRequestError(
        'events',
        `unknown event type "${unknown}": the known types are ${[...known].join(', ')}`,
      );
    }
    return [...new Set(events)];
  }

  async list(): Promise<Record<string, unknown>[]> {
    return (await this.endpoints.active()).map(endpointJson);
  }

  private async row(id: string): Promise<EndpointRow> {
    if (!UUID.test(id)) throw new WebhookNotFoundError(id);
    const row = await this.endpoints.activeOne(id);
    if (row === undefined) throw new WebhookNotFoundError(id);
    return row;
  }

  async show(id: string): Promise<Record<string, unknown>> {
    return endpointJson(await this.row(id));
  }

  async create(body: { url: string; events: string[]; description?: string }, actor: AuditActor) {
    await this.checkUrl(body.url);
    const events = this.checkEvents(body.events);
    const secret = newSecret();
    const limit = this.settings.WEBHOOK_MAX_ENDPOINTS;
    return await this.endpoints.transaction(async (manager) => {
      if ((await this.endpoints.countForNew(manager)) >= limit) throw new WebhookLimitError(limit);
      const row = await this.endpoints.insert(manager, {
        url: body.url,
        events,
        description: body.description ?? null,
        sealedSecret: this.secrets.seal(secret),
      });
      await this.audited(manager, WebhookAuditActions.CREATED, row.id, actor);
      return { ...endpointJson(row), secret };
    });
  }

  async change(
    id: string,
    change: EndpointChange,
    actor: AuditActor,
  ): Promise<Record<string, unknown>> {
    await this.row(id);
    if (change.url !== undefined) await this.checkUrl(change.url);
    const events = change.events === undefined ? null : this.checkEvents(change.events);
    return await this.endpoints.transaction(async (manager) => {
      const row = await this.endpoints.change(manager, id, {
        url: change.url ?? null,
        events,
        description: change.description,
        disabled: change.disabled ?? null,
      });
      if (row === undefined) throw new WebhookNotFoundError(id);
      if (row.disabled_at !== null) {
        await this.deliveryRecords.failPending(manager, id, 'the endpoint is disabled');
      }
      await this.audited(manager, WebhookAuditActions.CHANGED, id, actor);
      return endpointJson(row);
    });
  }

  /** Marks the endpoint removed and ends its pending deliveries; a removed one is a no-op. */
  async remove(id: string, actor: AuditActor): Promise<void> {
    if (!UUID.test(id)) throw new WebhookNotFoundError(id);
    await this.endpoints.transaction(async (manager) => {
      const removed = await this.endpoints.lockRemoved(manager, id);
      if (removed === undefined) throw new WebhookNotFoundError(id);
      if (removed) return;
      await this.endpoints.markRemoved(manager, id);
      await this.deliveryRecords.failPending(manager, id, 'the endpoint was removed');
      await this.audited(manager, WebhookAuditActions.REMOVED, id, actor);
    });
  }

  async rotateSecret(
    id: string,
    graceSeconds: number,
    actor: AuditActor,
  ): Promise<Record<string, unknown>> {
    await this.row(id);
    const secret = newSecret();
    const row = await this.endpoints.transaction(async (manager) => {
      const rotated = await this.endpoints.rotateSecret(
        manager,
        id,
        this.secrets.seal(secret),
        graceSeconds,
      );
      if (rotated === undefined) throw new WebhookNotFoundError(id);
      await this.audited(manager, WebhookAuditActions.ROTATED, id, actor);
      return rotated;
    });
    return { ...endpointJson(row), secret };
  }

  async deliveries(
    id: string,
    query: { status?: string; limit?: number; cursor?: string },
  ): Promise<{ data: Record<string, unknown>[]; hasMore: boolean; nextCursor?: string }> {
    await this.row(id);
    const limit = query.limit ?? DEFAULT_PAGE;
    let after: [string, string] | null = null;
    if (query.cursor !== undefined) {
      const decoded = fromBase64url(query.cursor);
      const parts = decoded?.split('|');
      if (parts?.length !== 2 || !UUID.test(parts[1]) || Number.isNaN(Date.parse(parts[0]))) {
        throw badCursor();
      }
      after = [parts[0], parts[1]];
    }
    const rows = await this.deliveryRecords
      .page(id, { status: query.status ?? null, after, limit: limit + 1 })
      .catch((error: unknown) => {
        // A time JavaScript reads but PostgreSQL does not ("1", February 30th): the cursor's,
        // the only value here not checked already.
        throw isDataException(error) ? badCursor() : error;
      });
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map(deliveryJson),
      hasMore,
      ...(hasMore ? { nextCursor: toBase64url(`${last.created_at}|${last.id}`) } : {}),
    };
  }

  /** A new attempt of a delivery now, whatever its status. */
  async retry(id: string, deliveryId: string): Promise<Record<string, unknown>> {
    await this.row(id);
    if (!UUID.test(deliveryId)) throw new DeliveryNotFoundError(deliveryId);
    return await this.deliveryRecords.transaction(async (manager) => {
      const row = await this.deliveryRecords.retry(manager, deliveryId, id);
      if (row === undefined) throw new DeliveryNotFoundError(deliveryId);
      await queueAttempt(await this.queue.started(), manager, deliveryId);
      return deliveryJson(row);
    });
  }

  /** A `webhook.test` message to this endpoint alone, its object the Endpoint. */
  async test(id: string): Promise<Record<string, unknown>> {
    const endpoint = await this.row(id);
    const at = new Date();
    const body = JSON.stringify({
      type: TEST_EVENT_TYPE,
      timestamp: at.toISOString(),
      data: { object: endpointJson(endpoint) },
    });
    return await this.deliveryRecords.transaction(async (manager) => {
      const row = await this.deliveryRecords.insertTest(manager, id, {
        type: TEST_EVENT_TYPE,
        at,
        body,
      });
      await queueAttempt(await this.queue.started(), manager, row.id);
      return deliveryJson(row);
    });
  }
}

export function isDeliveryStatus(value: string): boolean {
  return (DELIVERY_STATUSES as readonly string[]).includes(value);
}
