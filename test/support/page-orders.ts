import { withClient } from '../setup/clusters';

/**
 * Refills the table with `total` orders for the page shapes: ids 1…total, every status, 100 pets
 * (10,000 orders each at a million), `complete` on every other order, a ship date on three in four
 * (one minute apart from 2026-01-01). The indexes are dropped and rebuilt around the load, as
 * their definitions stand in the database (the migrations'), which is much faster. Returns how
 * many indexes were rebuilt. Shared by the v2 plans test and the bench's page measurements.
 */
export async function seedPageOrders(databaseUrl: string, total: number): Promise<number> {
  return withClient(databaseUrl, async (c) => {
    await c.query('TRUNCATE orders');
    const { rows: indexes } = await c.query<{ name: string; definition: string }>(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
        WHERE tablename = 'orders' AND indexname <> 'PK_orders'`,
    );
    for (const { name } of indexes) await c.query(`DROP INDEX "${name}"`);
    await c.query(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
       SELECT g, g % 100, g % 5 + 1,
              CASE WHEN g % 4 = 0 THEN NULL
                   ELSE timestamptz '2026-01-01T00:00:00Z' + g * interval '1 minute' END,
              g % 2 = 0,
              (ARRAY['pending', 'shipped', 'cancelled'])[g % 3 + 1]
         FROM generate_series(1, $1::int) AS g`,
      [total],
    );
    for (const { definition } of indexes) await c.query(definition);
    await c.query('VACUUM ANALYZE orders');
    return indexes.length;
  });
}
