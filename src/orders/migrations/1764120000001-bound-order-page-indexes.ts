import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * v2's pages read through three indexes besides the primary key, on the columns that do not
 * change once an order is placed: (ship_date, id) for the shipDate sorts and ranges, (pet_id, id)
 * and (pet_id, ship_date, id) for a pet's orders in either sort. Filters on `status` and
 * `complete` are checked on the rows a page examines, which are bounded (pages/order-page.sql.ts).
 *
 * The indexes on status and complete go: they are columns that cancelling and shipping change,
 * and an UPDATE of an indexed column adds an entry to every index of the table (it cannot be a
 * heap-only tuple), where an UPDATE of unindexed columns usually writes the heap page alone. Built
 * and dropped CONCURRENTLY, outside a transaction, as AddOrderPageIndexes explains.
 */
const DROPPED: Record<string, string> = {
  IDX_orders_status_id: '"status", "id"',
  IDX_orders_complete_id: '"complete", "id"',
  IDX_orders_status_ship_date_id: '"status", "ship_date", "id"',
};
const ADDED: Record<string, string> = {
  IDX_orders_pet_id_ship_date_id: '"pet_id", "ship_date", "id"',
};

export class BoundOrderPageIndexes1764120000001 implements MigrationInterface {
  name = 'BoundOrderPageIndexes1764120000001';
  transaction = false;

  public async up(queryRunner: QueryRunner): Promise<void> {
    for (const [name, columns] of Object.entries(ADDED)) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "public"."${name}"`);
      await queryRunner.query(`CREATE INDEX CONCURRENTLY "${name}" ON "orders" (${columns})`);
    }
    for (const name of Object.keys(DROPPED)) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "public"."${name}"`);
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const [name, columns] of Object.entries(DROPPED)) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "public"."${name}"`);
      await queryRunner.query(`CREATE INDEX CONCURRENTLY "${name}" ON "orders" (${columns})`);
    }
    for (const name of Object.keys(ADDED)) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "public"."${name}"`);
    }
  }
}
