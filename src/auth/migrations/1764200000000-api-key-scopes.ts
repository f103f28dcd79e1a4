import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A key's scopes: what it may do, sorted. NULL, as for every existing key, is every
 * scope but `keys:admin`: the keys issued before scopes keep their full access to the API. The
 * key changes trigger announces a change to them like any other column.
 */
export class ApiKeyScopes1764200000000 implements MigrationInterface {
  name = 'ApiKeyScopes1764200000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "scopes" text array`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "scopes"`);
  }
}
