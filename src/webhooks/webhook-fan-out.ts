import { Injectable } from '@nestjs/common';
import { jobsInTransaction } from '../database/job-queue-db';
import { type ConsumesEvents, EventConsumer, type RelayedEvent } from '../events/event-consumer';
import { JobQueue } from '../events/job-queue';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { WebhookMessages } from './webhook-messages';
import { DELIVERY_QUEUE } from './webhook-queue';

/**
 * Webhooks as a consumer of the audit trail: the committed events a worker fetched together
 * become, after their changes committed, a delivery per subscribed endpoint, each with its first
 * attempt's job, written in one transaction. Each event's message body is made here, once for all
 * of its endpoints, and every attempt sends it as it is; an event whose action no endpoint
 * subscribes to costs no body (no read of its record) and no transaction. What a change costs
 * does not depend on how many endpoints there are.
 */
@EventConsumer({ name: 'webhooks', actions: '*', concurrency: 100 })
@Injectable()
export class WebhookFanOut implements ConsumesEvents {
  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly queue: JobQueue,
    private readonly messages: WebhookMessages,
  ) {}

  async consume(event: RelayedEvent): Promise<void> {
    await this.consumeBatch([event]);
  }

  async consumeBatch(batch: readonly RelayedEvent[]): Promise<void> {
    // An endpoint that subscribes after this read misses the batch's events of its new actions,
    // as one subscribing after the batch's insert would.
    const subscribed = new Set(await this.endpoints.subscribedActions());
    const events = batch.filter((event) => subscribed.has(event.action));
    if (events.length === 0) return;
    const boss = await this.queue.started();
    const bodies = await this.messages.bodiesOf(
      events.map((event) => ({
        type: event.action,
        actor: event.actor,
        target: event.target,
        request_id: event.requestId ?? null,
        at: new Date(event.at),
      })),
    );
    await this.deliveries.transaction(async (manager) => {
      const deliveries = await this.deliveries.fanOut(manager, {
        ids: events.map((event) => event.id),
        actions: events.map((event) => event.action),
        at: events.map((event) => event.at),
        bodies,
      });
      if (deliveries.length === 0) return;
      await boss.insert(
        DELIVERY_QUEUE,
        deliveries.map((deliveryId) => ({ data: { deliveryId } })),
        { db: await jobsInTransaction(manager) },
      );
    });
  }
}
