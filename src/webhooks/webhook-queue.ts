/**
 * The queue of delivery attempts: pg-boss's, in its own schema, created by this module's
 * migration (the service's runtime role creates nothing). A job carries one delivery's id; the
 * delivery record (webhook_deliveries) is this module's, and the admin API reads only it.
 */
export const QUEUE_SCHEMA = 'pgboss';
export const DELIVERY_QUEUE = 'webhook-delivery';

/**
 * Retries of a job by pg-boss happen only when an attempt was cut off (its process died and the
 * job expired): a failed attempt is scheduled again by the deliverer as a new job, at the time
 * the retry schedule says. Enough for any number of crashes in a row that matters.
 */
export const EXPIRED_JOB_RETRIES = 100;
