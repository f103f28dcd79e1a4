import type { PgBoss } from 'pg-boss';
import type { EntityManager } from 'typeorm';
import { jobsInTransaction } from '../database/job-queue-db';

/**
 * The queue of delivery attempts: pg-boss's (see src/events/job-queue.ts), created by this
 * module's migration. A job carries one delivery's id; the delivery record (webhook_deliveries)
 * is this module's, and the admin API reads only it.
 */
export { QUEUE_SCHEMA } from '../events/job-queue';
export const DELIVERY_QUEUE = 'webhook-delivery';

/**
 * Retries of a job by pg-boss happen only when an attempt was cut off (its process died and the
 * job expired): a failed attempt is scheduled again by the deliverer as a new job, at the time
 * the retry schedule says. Enough for any number of crashes in a row that matters.
 */
export const EXPIRED_JOB_RETRIES = 100;

/** Queues an attempt of a delivery (at `startAfter`, else now) in the transaction of `manager`. */
export async function queueAttempt(
  boss: PgBoss,
  manager: EntityManager,
  deliveryId: string,
  startAfter?: Date,
): Promise<void> {
  await boss.send(
    DELIVERY_QUEUE,
    { deliveryId },
    { startAfter, db: await jobsInTransaction(manager) },
  );
}
