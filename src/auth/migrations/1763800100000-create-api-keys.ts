import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateApiKeys1763800100000 implements MigrationInterface {
  name = 'CreateApiKeys1763800100000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "api_keys" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "name" text, "prefix" text NOT NULL, "key_hash" character(64) NOT NULL, "plan" text NOT NULL, "per_minute" integer, "per_day" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "revoked_at" TIMESTAMP WITH TIME ZONE, "last_used_at" TIMESTAMP WITH TIME ZONE, "banned_until" TIMESTAMP WITH TIME ZONE, CONSTRAINT "CHK_api_keys_enterprise_limits" CHECK (("plan" = 'enterprise' AND "per_minute" IS NOT NULL AND "per_day" IS NOT NULL AND "per_minute" > 0 AND "per_day" > 0) OR ("plan" <> 'enterprise' AND "per_minute" IS NULL AND "per_day" IS NULL)), CONSTRAINT "CHK_api_keys_plan" CHECK ("plan" IN ('free', 'pro', 'business', 'enterprise')), CONSTRAINT "PK_api_keys" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_api_keys_key_hash" ON "api_keys" ("key_hash") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."UQ_api_keys_key_hash"`);
    await queryRunner.query(`DROP TABLE "api_keys"`);
  }
}
