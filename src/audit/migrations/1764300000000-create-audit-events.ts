import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit trail: one row per change, never updated nor deleted. The
 * database enforces it whatever role connects: a trigger refuses every UPDATE, DELETE and
 * TRUNCATE, the table owner's and a superuser's included; and the roles that were granted more
 * (docker/postgres/initdb.d/10-roles.sh gives the instances' role UPDATE and DELETE on every
 * table by default) keep only SELECT and INSERT. Newest first is a backward scan of the primary
 * key; each filter (action, actor, target) has its own index, ending in the id for the same order.
 */
export class CreateAuditEvents1764300000000 implements MigrationInterface {
  name = 'CreateAuditEvents1764300000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "audit_events" ("id" bigint GENERATED ALWAYS AS IDENTITY, "at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "actor" text NOT NULL, "action" text NOT NULL, "target" text NOT NULL, "request_id" text, CONSTRAINT "PK_audit_events" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_audit_events_action_id" ON "audit_events" ("action", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_audit_events_actor_id" ON "audit_events" ("actor", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_audit_events_target_id" ON "audit_events" ("target", "id")`,
    );
    await queryRunner.query(`
      CREATE FUNCTION "audit_events_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP
          USING ERRCODE = 'insufficient_privilege';
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER "TR_audit_events_append_only" BEFORE UPDATE OR DELETE ON "audit_events"
      FOR EACH STATEMENT EXECUTE FUNCTION "audit_events_refuse_change"()`);
    await queryRunner.query(`
      CREATE TRIGGER "TR_audit_events_no_truncate" BEFORE TRUNCATE ON "audit_events"
      FOR EACH STATEMENT EXECUTE FUNCTION "audit_events_refuse_change"()`);
    // Default privileges granted UPDATE and DELETE to other roles as the table was created: take
    // them back from every role but the owner (whom the trigger stops).
    await queryRunner.query(`
      DO $$
      DECLARE grantee regrole;
      BEGIN
        REVOKE UPDATE, DELETE, TRUNCATE ON "audit_events" FROM PUBLIC;
        FOR grantee IN
          SELECT DISTINCT acl.grantee::regrole
            FROM pg_class, aclexplode(pg_class.relacl) AS acl
           WHERE pg_class.oid = '"audit_events"'::regclass
             AND acl.grantee <> 0 AND acl.grantee <> pg_class.relowner
        LOOP
          EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON "audit_events" FROM %s', grantee);
        END LOOP;
      END
      $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "audit_events"`);
    await queryRunner.query(`DROP FUNCTION "audit_events_refuse_change"()`);
  }
}
