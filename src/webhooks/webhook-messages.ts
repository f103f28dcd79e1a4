import type { DataSource } from 'typeorm';
import { type ApiKeyStore, KeyNotFoundError } from '../auth/api-key.store';
import { keyResourceJson } from '../auth/key-json';
import { pgPoolOf } from '../platform/pg-pool';
import { orderJson, type OrderRow } from '../orders/order-json';
import { ORDER_COLUMNS } from '../orders/orders.sql';

/** The audit event a message is about, as the deliverer reads it with its delivery. */
export interface MessageEvent {
  type: string;
  actor: string;
  target: string;
  request_id: string | null;
  at: Date;
}

/** Whether `id` is an order id PostgreSQL's bigint holds. */
function isBigint(id: string): boolean {
  return /^\d{1,19}$/.test(id) && BigInt(id) <= 9223372036854775807n;
}

/** A target `<subject>:<id>` split in two. */
function subjectOf(target: string): [subject: string, id: string] {
  const colon = target.indexOf(':');
  return [target.slice(0, colon), target.slice(colon + 1)];
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

  /** The Orders of `ids` (digits only) as v1 serves them, in one statement, by id. */
  private async ordersOf(ids: string[]): Promise<Map<string, string>> {
    const orders = new Map<string, string>();
    if (ids.length === 0) return orders;
    const result = await pgPoolOf(this.db).query<OrderRow>({
      name: 'webhooks.orders',
      text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ANY ($1::bigint[])`,
      values: [ids],
      rowMode: 'array',
    });
    for (const row of result.rows) orders.set(row[0], orderJson(row));
    return orders;
  }

  /** The JSON text of the object an event is about (an order's read beforehand, in `orders`). */
  private async objectOf(target: string, orders: Map<string, string>): Promise<string> {
    const [subject, id] = subjectOf(target);
    const order = subject === 'order' ? orders.get(id) : undefined;
    if (order !== undefined) return order;
    if (subject === 'key') {
      try {
        return JSON.stringify(keyResourceJson(await this.keys.find(id)));
      } catch (error) {
        if (!(error instanceof KeyNotFoundError)) throw error;
      }
    }
    return JSON.stringify({ id: target });
  }

  /** The bodies of the messages of `events`, in their order: the orders among them read at once. */
  async bodiesOf(events: readonly MessageEvent[]): Promise<string[]> {
    const orderIds = events
      .map((event) => subjectOf(event.target))
      .filter(([subject, id]) => subject === 'order' && isBigint(id))
      .map(([, id]) => id);
    const orders = await this.ordersOf([...new Set(orderIds)]);
    const bodies: string[] = [];
    for (const event of events) {
      const object = await this.objectOf(event.target, orders);
      const requestId =
        event.request_id === null ? '' : `,"requestId":${JSON.stringify(event.request_id)}`;
      bodies.push(
        `{"type":${JSON.stringify(event.type)},"timestamp":"${event.at.toISOString()}",` +
          `"data":{"object":${object},"actor":${JSON.stringify(event.actor)}${requestId}}}`,
      );
    }
    return bodies;
  }
}
