import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The indexes of v2's pages (src/orders/pages/order-page.sql.ts): each filter of a page, then its sort
 * key, then id, so a page is one range scan from its cursor in every shape the API promises:
 * by id (the primary key), per status, per pet, per `complete`, and by ship date, alone or
 * within one status (read backwards for the descending sorts).
 *
 * Built CONCURRENTLY, outside a transaction: the table is shared with the parts of the store that
 * place and ship orders, whose writes a plain CREATE INDEX would block for the whole build. A
 * build that failed leaves an invalid index behind; the migration was not recorded then, and its
 * next run drops and rebuilds it.
 */
const INDEXES: Record<string, string> = {
  IDX_orders_status_id: '"status", "id"',
  IDX_orders_pet_id_id: '"pet_id", "id"',
  IDX_orders_complete_id: '"complete", "id"',
  IDX_orders_ship_date_id: '"ship_date", "id"',
  IDX_orders_status_ship_date_id: '"status", "ship_date", "id"',
};

export class AddOrderPageIndexes1763900000000 implements MigrationInterface {
  name = 'AddOrderPageIndexes1763900000000';
  transaction = false;

  public async up(queryRunner: QueryRunner): Promise<void> {
    for (const [name, columns] of Object.entries(INDEXES)) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "public"."${name}"`);
      await queryRunner.query(`CREATE INDEX CONCURRENTLY "${name}" ON "orders" (${columns})`);
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const name of Object.keys(INDEXES).reverse()) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "public"."${name}"`);
    }
  }
}
