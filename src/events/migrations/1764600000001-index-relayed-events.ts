import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The relay's read of the events after its cursor, in the order of their transactions: an index
 * built without blocking the changes that write events (hence outside a transaction).
 */
export class IndexRelayedEvents1764600000001 implements MigrationInterface {
  name = 'IndexRelayedEvents1764600000001';
  transaction = false;

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS "IDX_audit_events_xid_id" ON "audit_events" ("xid", "id") WHERE "xid" IS NOT NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "IDX_audit_events_xid_id"`);
  }
}
