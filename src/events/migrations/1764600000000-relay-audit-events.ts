import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The relay of committed audit events to their consumers (see src/events/event-relay.ts).
 *
 * Each event records the id of the transaction that wrote it: the relay takes only events whose
 * transaction is older than every one still running, so an event that commits after a later one
 * is never passed over. Added without a rewrite of the table: the column first, its default
 * after, so events already written keep a null (the relay never takes them: the trigger this
 * release removes delivered them).
 *
 * `event_relay` keeps how far the relay went: one row per relay, locked by the one relaying.
 */
export class RelayAuditEvents1764600000000 implements MigrationInterface {
  name = 'RelayAuditEvents1764600000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "audit_events" ADD COLUMN "xid" xid8`);
    await queryRunner.query(
      `ALTER TABLE "audit_events" ALTER COLUMN "xid" SET DEFAULT pg_current_xact_id()`,
    );
    await queryRunner.query(`
      CREATE TABLE "event_relay" (
        "name" text NOT NULL,
        "xid" xid8 NOT NULL DEFAULT '0',
        "event_id" bigint NOT NULL DEFAULT 0,
        "relayed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_event_relay" PRIMARY KEY ("name")
      )`);
    await queryRunner.query(`INSERT INTO "event_relay" ("name") VALUES ('audit')`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "event_relay"`);
    await queryRunner.query(`ALTER TABLE "audit_events" DROP COLUMN "xid"`);
  }
}
