import type { DataSource } from 'typeorm';
import { eventObjectsOf } from '../audit/audit-objects';

/** The audit event a message is about, as the deliverer reads it with its delivery. */
export interface MessageEvent {
  type: string;
  actor: string;
  target: string;
  request_id: string | null;
  at: Date;
}

/**
 * The bodies of the messages: `{"type", "timestamp", "data": {"object", "actor", "requestId"}}`,
 * the object being what the event's target is now, as the module that emits the event declares
 * it (`defineEventObjects`, beside its audit actions); for a subject none declares,
 * `{"id": "<target>"}`.
 */
export class WebhookMessages {
  constructor(private readonly db: DataSource) {}

  /** The bodies of the messages of `events`, in their order: the objects of each subject read at once. */
  async bodiesOf(events: readonly MessageEvent[]): Promise<string[]> {
    const objects = await eventObjectsOf(
      events.map((event) => event.target),
      this.db,
    );
    return events.map((event) => {
      const object = objects.get(event.target) ?? JSON.stringify({ id: event.target });
      const requestId =
        event.request_id === null ? '' : `,"requestId":${JSON.stringify(event.request_id)}`;
      return (
        `{"type":${JSON.stringify(event.type)},"timestamp":"${event.at.toISOString()}",` +
        `"data":{"object":${object},"actor":${JSON.stringify(event.actor)}${requestId}}}`
      );
    });
  }
}
