import { MigrationInterface, QueryRunner } from 'typeorm';
import { DELIVERY_QUEUE, QUEUE_SCHEMA } from '../webhook-queue';

/** One job per row of `deliveries` (a relation with an `id`), to start at `startAfter`. */
function insertJobs(deliveries: string, startAfter: string): string {
  return `
    INSERT INTO ${QUEUE_SCHEMA}.job (name, data, start_after, expire_seconds, deletion_seconds,
      keep_until, retry_limit, retry_delay, retry_backoff, retry_delay_max, policy)
    SELECT q.name, jsonb_build_object('deliveryId', d.id), ${startAfter}, q.expire_seconds,
           q.deletion_seconds, ${startAfter} + q.retention_seconds * interval '1s',
           q.retry_limit, q.retry_delay, q.retry_backoff, q.retry_delay_max, q.policy
      FROM ${deliveries} d, ${QUEUE_SCHEMA}.queue q WHERE q.name = '${DELIVERY_QUEUE}'`;
}

/**
 * What a change with a subscribed endpoint adds to its transaction, made lighter:
 *
 * - Queuing a delivery no longer notifies the workers. A transaction that sends a notification
 *   holds, through its commit, a lock that one such transaction holds at a time: every change
 *   with a subscribed endpoint committed alone, its log flush included. The workers poll for jobs
 *   instead (see WebhookDeliverer), well within the time a delivery has to start.
 * - The deliveries and their jobs are written by one statement, not a loop of calls.
 * - A delivery's reference to its endpoint is no longer checked by a foreign key: endpoints are
 *   never deleted (a removed one keeps its row), and the check share-locked the endpoint's row
 *   for every change queuing a delivery to it, concurrent changes sharing that lock.
 *
 * `CREATE OR REPLACE` keeps the functions' owner and grants.
 */
export class LighterWebhookQueuing1764500000001 implements MigrationInterface {
  name = 'LighterWebhookQueuing1764500000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "webhook_enqueue"(delivery uuid, start_after timestamptz)
      RETURNS void LANGUAGE sql SECURITY DEFINER
      SET search_path = pg_catalog, pg_temp AS $$
        ${insertJobs('(SELECT delivery AS id)', 'start_after')}
      $$`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "webhook_fan_out"() RETURNS trigger LANGUAGE plpgsql
      SECURITY DEFINER SET search_path = public, pg_catalog, pg_temp AS $$
      BEGIN
        WITH deliveries AS (
          INSERT INTO webhook_deliveries (endpoint_id, event_id, webhook_id, type, event_at,
                                          next_attempt_at)
          SELECT e.id, NEW.id, 'evt_' || NEW.id, NEW.action, NEW.at, now()
            FROM webhook_endpoints e
           WHERE e.removed_at IS NULL AND e.disabled_at IS NULL
             AND NEW.action = ANY (e.events)
          RETURNING id
        )
        ${insertJobs('deliveries', 'now()')};
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(
      `ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_endpoint_id_fkey"`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey"
         FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints" ("id")`,
    );
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "webhook_fan_out"() RETURNS trigger LANGUAGE plpgsql
      SECURITY DEFINER SET search_path = public, pg_catalog, pg_temp AS $$
      DECLARE delivery record;
      BEGIN
        FOR delivery IN
          INSERT INTO webhook_deliveries (endpoint_id, event_id, webhook_id, type, event_at,
                                          next_attempt_at)
          SELECT e.id, NEW.id, 'evt_' || NEW.id, NEW.action, NEW.at, now()
            FROM webhook_endpoints e
           WHERE e.removed_at IS NULL AND e.disabled_at IS NULL
             AND NEW.action = ANY (e.events)
          RETURNING id
        LOOP
          PERFORM webhook_enqueue(delivery.id, now());
        END LOOP;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "webhook_enqueue"(delivery uuid, start_after timestamptz)
      RETURNS void LANGUAGE sql SECURITY DEFINER
      SET search_path = pg_catalog, pg_temp AS $$
        ${insertJobs('(SELECT delivery AS id)', 'start_after')};
        SELECT pg_notify('pgboss_' || left(encode(sha224('${QUEUE_SCHEMA}'::bytea), 'hex'), 24),
                         '${DELIVERY_QUEUE}')
         WHERE start_after <= now();
      $$`);
  }
}
