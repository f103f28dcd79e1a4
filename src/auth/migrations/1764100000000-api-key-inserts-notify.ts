import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A new key is announced on `api_key_changes` too, with its hash, when its transaction commits:
 * each instance adds it to its set of the keys' hashes at once (`KnownKeyHashes`), so a key
 * issued by another process (`keys create`, `keys rotate`, SQL) is known everywhere before its
 * first request, and a client past its budget of key lookups is never refused it.
 */
export class ApiKeyInsertsNotify1764100000000 implements MigrationInterface {
  name = 'ApiKeyInsertsNotify1764100000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION "api_keys_notify_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('api_key_changes', NEW."key_hash");
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER "TR_api_keys_notify_insert" AFTER INSERT ON "api_keys" FOR EACH ROW
      EXECUTE FUNCTION "api_keys_notify_insert"()`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TR_api_keys_notify_insert" ON "api_keys"`);
    await queryRunner.query(`DROP FUNCTION "api_keys_notify_insert"()`);
  }
}
