import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every change to a key that decides whether it is admitted (revoked, banned, unbanned, its expiry
 * or its limits changed, deleted) is announced on the channel `api_key_changes` with the key's
 * hash, when its transaction commits: each instance drops that key from its cache at once
 * (`KeyChangesFeed`). Everything but `last_used_at` decides: the instances write it once a
 * minute per key, and a notification each time would empty the caches for nothing. A column
 * added later is announced without touching this trigger.
 */
export class ApiKeyChangesNotify1764000000000 implements MigrationInterface {
  name = 'ApiKeyChangesNotify1764000000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION "api_keys_notify_change"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('api_key_changes', OLD."key_hash");
        IF TG_OP = 'UPDATE' AND NEW."key_hash" IS DISTINCT FROM OLD."key_hash" THEN
          PERFORM pg_notify('api_key_changes', NEW."key_hash");
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER "TR_api_keys_notify_update" AFTER UPDATE ON "api_keys" FOR EACH ROW
      WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
      EXECUTE FUNCTION "api_keys_notify_change"()`);
    await queryRunner.query(`
      CREATE TRIGGER "TR_api_keys_notify_delete" AFTER DELETE ON "api_keys" FOR EACH ROW
      EXECUTE FUNCTION "api_keys_notify_change"()`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TR_api_keys_notify_delete" ON "api_keys"`);
    await queryRunner.query(`DROP TRIGGER "TR_api_keys_notify_update" ON "api_keys"`);
    await queryRunner.query(`DROP FUNCTION "api_keys_notify_change"()`);
  }
}
