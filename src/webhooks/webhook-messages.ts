import type { DataSource } from 'typeorm';
import { type ApiKeyStore, KeyNotFoundError } from '../auth/api-key.store';
import { keyResourceJson } from '../auth/key-json';
import { pgPoolOf } from '../platform/pg-pool';
import { orderJson, type OrderRow } from '../orders/order-json';
import { ORDER_COLUMNS } from '../orders/orders.sql';

interface EventRow {
  actor: string;
  target: string;
  request_id: string | null;
  at: Date;
}

/**
 * The bodies of the messages: `{"type", "timestamp", "data": {"object", "actor", "requestId"}}`,
 * the object being what the event's target is now (an Order as v1 serves it, a Key as the admin
 * API shows it; for a subject this module does not know, `{"id": "<target>"}`).
 */
export class WebhookMessages {
  constructor(
    private readonly db: DataSource,
    private readonly keys: ApiKeyStore,
  ) {}

  /** The JSON text of the object an event is about. */
  private async objectOf(target: string): Promise<string> {
    const colon = target.indexOf(':');
    const [subject, id] = [target.slice(0, colon), target.slice(colon + 1)];
    if (subject === 'order' && /^\d+$/.test(id)) {
      const result = await pgPoolOf(this.db).query<OrderRow>({
        text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1`,
        values: [id],
        rowMode: 'array',
      });
      if (result.rows.length > 0) return orderJson(result.rows[0]);
    }
    if (subject === 'key') {
      try {
        return JSON.stringify(keyResourceJson(await this.keys.find(id)));
      } catch (error) {
        if (!(error instanceof KeyNotFoundError)) throw error;
      }
    }
    return JSON.stringify({ id: target });
  }

  /** The body of the message of audit event `eventId` of type `type`. */
  async bodyOf(eventId: string, type: string): Promise<string> {
    const rows: EventRow[] = await this.db.query(
      'SELECT actor, target, request_id, at FROM audit_events WHERE id = $1',
      [eventId],
    );
    if (rows.length === 0) throw new Error(`audit event ${eventId} not found`);
    const event = rows[0];
    const object = await this.objectOf(event.target);
    const requestId =
      event.request_id === null ? '' : `,"requestId":${JSON.stringify(event.request_id)}`;
    return (
      `{"type":${JSON.stringify(type)},"timestamp":"${event.at.toISOString()}",` +
      `"data":{"object":${object},"actor":${JSON.stringify(event.actor)}${requestId}}}`
    );
  }
}
