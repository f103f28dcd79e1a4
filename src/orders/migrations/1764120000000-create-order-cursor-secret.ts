import { randomBytes } from 'node:crypto';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The secret v2's cursors are signed with when `CURSOR_SECRET` is not configured: generated once
 * here, kept in the database so that every instance signs and checks alike (a cursor from one
 * instance is good on any other), and never sent to a client. One row.
 */
export class CreateOrderCursorSecret1764120000000 implements MigrationInterface {
  name = 'CreateOrderCursorSecret1764120000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "order_cursor_secret" ("id" smallint NOT NULL DEFAULT 1, "secret" bytea NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_order_cursor_secret" PRIMARY KEY ("id"), CONSTRAINT "CHK_order_cursor_secret_one_row" CHECK ("id" = 1))`,
    );
    await queryRunner.query(`INSERT INTO "order_cursor_secret" ("secret") VALUES ($1)`, [
      randomBytes(32),
    ]);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "order_cursor_secret"`);
  }
}
