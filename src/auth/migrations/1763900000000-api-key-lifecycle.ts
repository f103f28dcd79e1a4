import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Key lifecycle: an optional expiry (existing keys never expire), and the rotation family of the
 * replacements `keys rotate` issues (the id of the key they descend from; the rate limiter counts
 * a family as one and a ban applies to all of it). Null, as for every existing key and every key
 * inserted without it, means the key heads its own family.
 */
export class ApiKeyLifecycle1763900000000 implements MigrationInterface {
  name = 'ApiKeyLifecycle1763900000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "api_keys" ADD "expires_at" TIMESTAMP WITH TIME ZONE, ADD "family_id" uuid`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_api_keys_family_id" ON "api_keys" ("family_id") `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_api_keys_family_id"`);
    await queryRunner.query(
      `ALTER TABLE "api_keys" DROP COLUMN "family_id", DROP COLUMN "expires_at"`,
    );
  }
}
