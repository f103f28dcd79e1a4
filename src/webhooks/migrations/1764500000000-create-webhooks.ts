import { MigrationInterface, QueryRunner } from 'typeorm';
import { DELIVERY_QUEUE, EXPIRED_JOB_RETRIES, QUEUE_SCHEMA } from '../webhook-queue';

/** The roles granted rights on `audit_events` other than its owner: the service's runtime roles. */
const RUNTIME_ROLES = `
  SELECT DISTINCT acl.grantee::regrole AS grantee
    FROM pg_class, aclexplode(pg_class.relacl) AS acl
   WHERE pg_class.oid = '"audit_events"'::regclass
     AND acl.grantee <> 0 AND acl.grantee <> pg_class.relowner`;

/**
 * Webhooks: the endpoints, one delivery record per event and endpoint, and pg-boss's schema for
 * the queue of attempts.
 *
 * The audit trail is the outbox: a trigger on `audit_events` turns each event, in the
 * transaction that records it, into a delivery per enabled endpoint subscribed to its action,
 * and queues a job for each. A rolled-back change leaves neither; the statement that records
 * the event makes no round trip more. The trigger's function runs with its owner's rights, so
 * the runtime role needs no right on the queue's tables for that; it gets read and write rights
 * on them (pg-boss's workers fetch, complete and prune jobs) and nothing it could create with.
 *
 * pg-boss's own SQL builds its schema: an upgrade of pg-boss that changes it comes with a
 * migration running its migration plans.
 */
export class CreateWebhooks1764500000000 implements MigrationInterface {
  name = 'CreateWebhooks1764500000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const { getConstructionPlans } = await import('pg-boss');
    await queryRunner.query(getConstructionPlans(QUEUE_SCHEMA));
    const queueOptions = {
      policy: 'standard',
      retryLimit: EXPIRED_JOB_RETRIES,
      retryDelay: 0,
      retryBackoff: false,
      // Replaced at start by the instances' WEBHOOK_TIMEOUT_MS (see WebhookDeliverer).
      expireInSeconds: 15,
      retentionSeconds: 14 * 24 * 3600,
      deleteAfterSeconds: 24 * 3600,
    };
    await queryRunner.query(
      `SELECT ${QUEUE_SCHEMA}.create_queue('${DELIVERY_QUEUE}', '${JSON.stringify(queueOptions)}'::jsonb)`,
    );

    await queryRunner.query(`
      CREATE TABLE "webhook_endpoints" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "url" text NOT NULL,
        "events" text[] NOT NULL,
        "description" text,
        "secret" text NOT NULL,
        "previous_secret" text,
        "previous_secret_until" TIMESTAMP WITH TIME ZONE,
        "secret_rotated_at" TIMESTAMP WITH TIME ZONE,
        "disabled_at" TIMESTAMP WITH TIME ZONE,
        "disabled_reason" text,
        "failing_since" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "removed_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_webhook_endpoints" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_webhook_endpoints_reason"
          CHECK ("disabled_reason" IN ('gone', 'failing', 'operator'))
      )`);
    await queryRunner.query(`
      CREATE TABLE "webhook_deliveries" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "endpoint_id" uuid NOT NULL REFERENCES "webhook_endpoints" ("id"),
        "event_id" bigint,
        "webhook_id" text NOT NULL,
        "type" text NOT NULL,
        "event_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "body" text,
        "status" text NOT NULL DEFAULT 'pending',
        "attempts" integer NOT NULL DEFAULT 0,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_timestamp(),
        "last_attempt_at" TIMESTAMP WITH TIME ZONE,
        "last_status_code" integer,
        "last_error" text,
        "next_attempt_at" TIMESTAMP WITH TIME ZONE,
        "delivered_at" TIMESTAMP WITH TIME ZONE,
        "lease_until" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_webhook_deliveries" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_webhook_deliveries_status"
          CHECK ("status" IN ('pending', 'delivered', 'failed'))
      )`);
    // An endpoint's deliveries newest first (the admin API's pages), and the pending ones.
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_deliveries_endpoint" ON "webhook_deliveries" ("endpoint_id", "created_at" DESC, "id" DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_deliveries_pending" ON "webhook_deliveries" ("created_at") WHERE "status" = 'pending'`,
    );

    // One job for one delivery, to start at `start_after`: the queue's settings, as pg-boss's
    // own insert takes them, and its notification so an idle worker fetches it at once.
    await queryRunner.query(`
      CREATE FUNCTION "webhook_enqueue"(delivery uuid, start_after timestamptz)
      RETURNS void LANGUAGE sql SECURITY DEFINER
      SET search_path = pg_catalog, pg_temp AS $$
        INSERT INTO ${QUEUE_SCHEMA}.job (name, data, start_after, expire_seconds, deletion_seconds,
          keep_until, retry_limit, retry_delay, retry_backoff, retry_delay_max, policy)
        SELECT q.name, jsonb_build_object('deliveryId', delivery), start_after, q.expire_seconds,
               q.deletion_seconds, start_after + q.retention_seconds * interval '1s',
               q.retry_limit, q.retry_delay, q.retry_backoff, q.retry_delay_max, q.policy
          FROM ${QUEUE_SCHEMA}.queue q WHERE q.name = '${DELIVERY_QUEUE}';
        SELECT pg_notify('pgboss_' || left(encode(sha224('${QUEUE_SCHEMA}'::bytea), 'hex'), 24),
                         '${DELIVERY_QUEUE}')
         WHERE start_after <= now();
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION "webhook_fan_out"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
      SET search_path = public, pg_catalog, pg_temp AS $$
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
      CREATE TRIGGER "TR_audit_events_webhooks" AFTER INSERT ON "audit_events"
      FOR EACH ROW EXECUTE FUNCTION "webhook_fan_out"()`);

    // The runtime roles: use the queue (pg-boss's workers read, write and prune its rows), and
    // queue a delivery's next attempt; no other role may call the function that queues one.
    await queryRunner.query(
      `REVOKE EXECUTE ON FUNCTION "webhook_enqueue"(uuid, timestamptz) FROM PUBLIC`,
    );
    await queryRunner.query(`
      DO $$
      DECLARE entry record;
      BEGIN
        FOR entry IN ${RUNTIME_ROLES}
        LOOP
          EXECUTE format('GRANT EXECUTE ON FUNCTION "webhook_enqueue"(uuid, timestamptz) TO %s', entry.grantee);
          EXECUTE format('GRANT USAGE ON SCHEMA ${QUEUE_SCHEMA} TO %s', entry.grantee);
          EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${QUEUE_SCHEMA} TO %s', entry.grantee);
          EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${QUEUE_SCHEMA} TO %s', entry.grantee);
          EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${QUEUE_SCHEMA} TO %s', entry.grantee);
        END LOOP;
      END
      $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TR_audit_events_webhooks" ON "audit_events"`);
    await queryRunner.query(`DROP FUNCTION "webhook_fan_out"()`);
    await queryRunner.query(`DROP FUNCTION "webhook_enqueue"(uuid, timestamptz)`);
    await queryRunner.query(`DROP TABLE "webhook_deliveries"`);
    await queryRunner.query(`DROP TABLE "webhook_endpoints"`);
    await queryRunner.query(`DROP SCHEMA ${QUEUE_SCHEMA} CASCADE`);
  }
}
