import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks fan out after the change commits, as a consumer of the relayed audit events
 * (src/webhooks/webhook-fan-out.ts): the trigger on the audit trail that wrote the deliveries and
 * their jobs inside the change's transaction goes, with its functions. Deliveries it queued keep
 * their jobs and are delivered as before.
 *
 * A delivery per event and endpoint: the fan-out looks its event's deliveries up by the event,
 * and a consumer run again after a crash adds none twice.
 */
export class FanOutAfterCommit1764600000002 implements MigrationInterface {
  name = 'FanOutAfterCommit1764600000002';
  transaction = false;

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER IF EXISTS "TR_audit_events_webhooks" ON "audit_events"`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS "webhook_fan_out"()`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS "webhook_enqueue"(uuid, timestamptz)`);
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS "IDX_webhook_deliveries_event" ON "webhook_deliveries" ("event_id", "endpoint_id") WHERE "event_id" IS NOT NULL`,
    );
  }

  public down(): Promise<void> {
    // The trigger and its functions are those of migrations 1764500000000 and 1764500000001:
    // a database from before this one has them.
    return Promise.reject(
      new Error('FanOutAfterCommit cannot be reverted: restore the database from before it'),
    );
  }
}
