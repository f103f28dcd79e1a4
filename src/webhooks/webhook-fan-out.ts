import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { type ConsumesEvents, EventConsumer, type RelayedEvent } from '../events/event-consumer';
import { inTransaction, JobQueue } from '../events/job-queue';
import { WebhookMessages } from './webhook-messages';
import { DELIVERY_QUEUE } from './webhook-queue';

/**
 * A delivery per event of `$1` (ids, with their actions `$2`, times `$3` and message bodies `$4`)
 * and enabled endpoint subscribed to its action, unless it has one already (a run of the fan-out
 * again, or a delivery the trigger of earlier releases wrote). It is made at the event's time: an
 * endpoint's deliveries are listed in the order of their events, however the fan-outs ran, and
 * the age of a pending one counts from its change.
 */
const FAN_OUT_SQL = `
  INSERT INTO webhook_deliveries (endpoint_id, event_id, webhook_id, type, event_at, body,
                                  next_attempt_at, created_at)
  SELECT e.id, v.event_id, 'evt_' || v.event_id, v.action, v.at, v.body, now(), v.at
    FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::text[])
           AS v (event_id, action, at, body)
    JOIN webhook_endpoints e
      ON e.removed_at IS NULL AND e.disabled_at IS NULL AND v.action = ANY (e.events)
   WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                      WHERE d.event_id = v.event_id AND d.endpoint_id = e.id)
  RETURNING id`;

/**
 * Webhooks as a consumer of the audit trail: the committed events a worker fetched together
 * become, after their changes committed, a delivery per subscribed endpoint, each with its first
 * attempt's job, written in one transaction. Each event's message body is made here, once for all
 * of its endpoints, and every attempt sends it as it is. What a change costs does not depend on
 * how many endpoints there are.
 */
@EventConsumer({ name: 'webhooks', actions: '*', concurrency: 100 })
@Injectable()
export class WebhookFanOut implements ConsumesEvents {
  constructor(
    private readonly db: DataSource,
    private readonly queue: JobQueue,
    private readonly messages: WebhookMessages,
  ) {}

  async consume(event: RelayedEvent): Promise<void> {
    await this.consumeBatch([event]);
  }

  async consumeBatch(events: readonly RelayedEvent[]): Promise<void> {
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
    await this.db.transaction(async (manager) => {
      const deliveries = await manager.query<{ id: string }[]>(FAN_OUT_SQL, [
        events.map((event) => event.id),
        events.map((event) => event.action),
        events.map((event) => event.at),
        bodies,
      ]);
      if (deliveries.length === 0) return;
      await boss.insert(
        DELIVERY_QUEUE,
        deliveries.map((delivery) => ({ data: { deliveryId: delivery.id } })),
        { db: await inTransaction(manager) },
      );
    });
  }
}
