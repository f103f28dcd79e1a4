import { DiscoveryService } from '@nestjs/core';
import type { AuditEventJson } from '../audit/audit-event';

/**
 * A committed audit event, as the relay hands it to a consumer (as the audit trail shows it): its
 * id (the same on every run of the consumer, to act once per event), when, who, what and on
 * which record.
 */
export type RelayedEvent = AuditEventJson;

export interface EventConsumerOptions {
  /** The consumer's name: its queue's and its metrics' (lower case, digits, `-`). */
  name: string;
  /** The audit actions it consumes, or `'*'`: every one. */
  actions: readonly string[] | '*';
  /** Runs after the first that threw, at most (default 10). */
  retryLimit?: number;
  /** The wait before the first of them, in seconds, doubled for each next (default 5). */
  retryDelaySeconds?: number;
  /** Events it runs at once in each worker process (default 4). */
  concurrency?: number;
}

/**
 * Declares a consumer of audit events, in the folder of the module it belongs to: a provider of
 * that module with a `consume(event)` method.
 *
 * ```ts
 * // src/inventory/restock-on-cancel.consumer.ts
 * @EventConsumer({ name: 'inventory-restock', actions: [OrderAuditActions.CANCELLED] })
 * @Injectable()
 * export class RestockOnCancel implements ConsumesEvents {
 *   async consume(event: RelayedEvent): Promise<void> { ... }
 * }
 * ```
 *
 * Each committed event of its actions reaches it at least once, after the change committed, in a
 * worker process (`SERVICE_ROLES` with `worker`); a run that throws is run again with backoff,
 * apart from the change and from every other consumer. It may run twice for one event (after a
 * crash): `event.id` lets it act once.
 */
export const EventConsumer = DiscoveryService.createDecorator<EventConsumerOptions>();

export interface ConsumesEvents {
  consume(event: RelayedEvent): Promise<void>;
  /**
   * Optional: the events a worker fetched together (up to half the consumer's `concurrency`),
   * consumed at once, e.g. written by one transaction instead of one each. When it throws, each
   * of them is retried, as if `consume` had thrown for each.
   */
  consumeBatch?(events: readonly RelayedEvent[]): Promise<void>;
}

const NAME = /^[a-z][a-z0-9-]{0,62}$/;

/** A consumer, as the relay and the workers know it. */
export interface Consumer {
  options: Required<EventConsumerOptions>;
  /** Its pg-boss queue. */
  queue: string;
  instance: ConsumesEvents;
  /** Whether it consumes events of `action`. */
  takes(action: string): boolean;
}

export function consumerOf(options: EventConsumerOptions, instance: ConsumesEvents): Consumer {
  if (!NAME.test(options.name)) {
    throw new Error(`EventConsumer: "${options.name}" is not a name (lower case, digits, -)`);
  }
  if (typeof instance.consume !== 'function') {
    throw new Error(`EventConsumer ${options.name} has no consume(event) method`);
  }
  const actions = options.actions === '*' ? undefined : new Set(options.actions);
  return {
    options: { retryLimit: 10, retryDelaySeconds: 5, concurrency: 4, ...options },
    queue: `events.${options.name}`,
    instance,
    takes: (action) => actions === undefined || actions.has(action),
  };
}
