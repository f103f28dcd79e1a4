import { MigrationInterface, QueryRunner } from 'typeorm';
import { DELIVERY_QUEUE, QUEUE_SCHEMA } from '../webhook-queue';

/** The queue's columns that a job copies from its queue's settings, as pg-boss's own insert does. */
const INSERT_JOB = `
  INSERT INTO ${QUEUE_SCHEMA}.job (name, data, start_after, expire_seconds, deletion_seconds,
    keep_until, retry_limit, retry_delay, retry_backoff, retry_delay_max, policy)
  SELECT q.name, jsonb_build_object('deliveryId', delivery), start_after, q.expire_seconds,
         q.deletion_seconds, start_after + q.retention_seconds * interval '1s',
         q.retry_limit, q.retry_delay, q.retry_backoff, q.retry_delay_max, q.policy
    FROM ${QUEUE_SCHEMA}.queue q WHERE q.name = '${DELIVERY_QUEUE}';`;

/**
 * Queuing a delivery no longer notifies the workers. A transaction that sends a notification
 * holds, through its commit, a lock that one such transaction holds at a time: every change with
 * a subscribed endpoint committed alone, its log flush included, instead of together with the
 * others. The workers poll for jobs instead (see WebhookDeliverer), well within the time a
 * delivery has to start.
 *
 * `CREATE OR REPLACE` keeps the function's owner and grants.
 */
export class WebhookEnqueueQuietly1764500000001 implements MigrationInterface {
  name = 'WebhookEnqueueQuietly1764500000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "webhook_enqueue"(delivery uuid, start_after timestamptz)
      RETURNS void LANGUAGE sql SECURITY DEFINER
      SET search_path = pg_catalog, pg_temp AS $$ ${INSERT_JOB} $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "webhook_enqueue"(delivery uuid, start_after timestamptz)
      RETURNS void LANGUAGE sql SECURITY DEFINER
      SET search_path = pg_catalog, pg_temp AS $$ ${INSERT_JOB}
        SELECT pg_notify('pgboss_' || left(encode(sha224('${QUEUE_SCHEMA}'::bytea), 'hex'), 24),
                         '${DELIVERY_QUEUE}')
         WHERE start_after <= now();
      $$`);
  }
}
