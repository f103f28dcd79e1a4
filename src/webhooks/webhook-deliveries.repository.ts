import type { DataSource, EntityManager } from 'typeorm';
import type { StatementPool } from '../database/statement-pool';
import { type DeliveryRow, firstReturned, returnedRows } from './webhook-json';
import {
  ATTEMPT_OUTCOME_SQL,
  BODIES,
  CLAIM,
  DELIVERED,
  DELIVERY_PAGE_SQL,
  FAIL_FOR_ENDPOINT_OFF_SQL,
  FAIL_PENDING_SQL,
  FAN_OUT_SQL,
  PENDING_SQL,
  RETRY_DELIVERY_SQL,
  TEST_DELIVERY_SQL,
  UNCLAIMED_SQL,
} from './webhooks.sql';

/** What a claimed delivery carries into its attempt. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  event_id: string | null;
  webhook_id: string;
  type: string;
  body: string | null;
  attempts: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  /** The audit event, read with it when its body is still to be written (its first attempt). */
  actor: string | null;
  target: string | null;
  request_id: string | null;
  at: Date | null;
}

/** Where a delivery that a job could not claim stands. */
export interface UnclaimedDelivery {
  status: string;
  leased: boolean;
  lease_until: Date;
  endpoint_off: boolean;
}

/** The events of a fan-out, each with its message body, in the same order. */
export interface FannedEvents {
  ids: string[];
  actions: string[];
  /** Their times, as the relay gave them. */
  at: string[];
  bodies: string[];
}

/** A page's bounds: after (created_at, id) when given, and at most `limit` rows. */
export interface DeliveryPageQuery {
  status: string | null;
  after: [createdAt: string, id: string] | null;
  limit: number;
}

/**
 * The `webhook_deliveries` table (its statements in webhooks.sql.ts): the admin API's pages and
 * retries and the fan-out on TypeORM's DataSource (a method that takes an EntityManager runs in
 * that transaction, {@link transaction}); the attempts' claims, bodies and successes, batch by
 * batch, on a pool of their own (`batches`, its sessions' settings the deliverer's).
 */
export class WebhookDeliveriesRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly batches: StatementPool,
  ) {}

  /** Runs `work` in a transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** Whether the DataSource is up (the gauges read nothing before, nor after it closed). */
  get available(): boolean {
    return this.dataSource.isInitialized;
  }

  /** Fails the endpoint's pending deliveries, with `reason` unless they have an error already. */
  async failPending(manager: EntityManager, endpointId: string, reason: string): Promise<void> {
    await manager.query(FAIL_PENDING_SQL, [endpointId, reason]);
  }

  /** A page of the endpoint's deliveries, newest first, as `query` bounds it. */
  page(endpointId: string, query: DeliveryPageQuery): Promise<DeliveryRow[]> {
    return this.dataSource.query<DeliveryRow[]>(DELIVERY_PAGE_SQL, [
      endpointId,
      query.status,
      query.after?.[0] ?? null,
      query.after?.[1] ?? null,
      query.limit,
    ]);
  }

  /** The delivery made pending again, due now; undefined when the endpoint has no such one. */
  async retry(
    manager: EntityManager,
    deliveryId: string,
    endpointId: string,
  ): Promise<DeliveryRow | undefined> {
    return firstReturned<DeliveryRow>(manager.query(RETRY_DELIVERY_SQL, [deliveryId, endpointId]));
  }

  /** A delivery to the endpoint alone, of `type` at `at`, due now (its webhook id its own). */
  async insertTest(
    manager: EntityManager,
    endpointId: string,
    message: { type: string; at: Date; body: string },
  ): Promise<DeliveryRow> {
    const rows: DeliveryRow[] = await manager.query(TEST_DELIVERY_SQL, [
      endpointId,
      message.type,
      message.at,
      message.body,
    ]);
    return rows[0];
  }

  /** The deliveries of `events` to the endpoints subscribed to them: the new ones' ids. */
  async fanOut(manager: EntityManager, events: FannedEvents): Promise<string[]> {
    const rows = await manager.query<{ id: string }[]>(FAN_OUT_SQL, [
      events.ids,
      events.actions,
      events.at,
      events.bodies,
    ]);
    return rows.map((row) => row.id);
  }

  /** Claims those of `ids` that are due, each for one attempt, leased for `leaseMs`. */
  claim(ids: readonly string[], leaseMs: number): Promise<ClaimedDelivery[]> {
    return this.batches.rows<ClaimedDelivery>(CLAIM, [ids, leaseMs]);
  }

  /** Writes the bodies of first attempts, by delivery id. */
  async writeBodies(bodies: ReadonlyMap<string, string>): Promise<void> {
    await this.batches.rows(BODIES, [[...bodies.keys()], [...bodies.values()]]);
  }

  /** Records deliveries delivered, each with its answer's status code. */
  async delivered(deliveries: readonly { id: string; status: number }[]): Promise<void> {
    await this.batches.rows(DELIVERED, [
      deliveries.map((d) => d.id),
      deliveries.map((d) => d.status),
    ]);
  }

  /** Where the delivery stands; undefined when there is none. */
  async unclaimed(deliveryId: string): Promise<UnclaimedDelivery | undefined> {
    const rows = await this.dataSource.query<UnclaimedDelivery[]>(UNCLAIMED_SQL, [deliveryId]);
    return rows.at(0);
  }

  /** Fails the delivery, pending still, of an endpoint disabled or removed. */
  async failForEndpointOff(deliveryId: string): Promise<void> {
    await this.dataSource.query(FAIL_FOR_ENDPOINT_OFF_SQL, [deliveryId]);
  }

  /** Records a failed attempt that was the delivery's last: it failed. */
  async failed(
    manager: EntityManager,
    deliveryId: string,
    statusCode: number | null,
    error: string,
  ): Promise<void> {
    await manager.query(ATTEMPT_OUTCOME_SQL, [deliveryId, 'failed', statusCode, error, null]);
  }

  /** Records a failed attempt with another to come in `waitMs`: when it is due. */
  async retryLater(
    manager: EntityManager,
    deliveryId: string,
    statusCode: number | null,
    error: string,
    waitMs: number,
  ): Promise<Date> {
    const [next] = returnedRows<{ next_attempt_at: Date }>(
      await manager.query(ATTEMPT_OUTCOME_SQL, [deliveryId, 'pending', statusCode, error, waitMs]),
    );
    return next.next_attempt_at;
  }

  /** How many deliveries are pending, and the age of the oldest in seconds (0: none). */
  async pendingSummary(): Promise<{ pending: number; oldest: number }> {
    const [summary] =
      await this.dataSource.query<{ pending: number; oldest: number }[]>(PENDING_SQL);
    return summary;
  }
}
