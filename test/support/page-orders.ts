import { withClient } from '../setup/clusters';

/** Pets of the spread store, whatever its size (2,000 orders each at a million). */
export const SPREAD_PETS = 500;
/** The two years the ship dates fall in. */
export const SPREAD_FROM = '2025-01-01T00:00:00Z';
export const SPREAD_TO = '2027-01-01T00:00:00Z';

/**
 * Refills the table with `total` orders spread as a real store's are, none of it in id order:
 * 500 pets, each one's orders scattered over the ids; ship dates over two years (to the
 * microsecond) in no relation to the id, 2 % undated; statuses mixed and uncorrelated with the id
 * (25 % pending, 60 % shipped, 15 % cancelled); `complete` on four shipped orders in five and no
 * other. Deterministic (PostgreSQL's hash functions of the id), so two runs hold the same rows.
 * The indexes are dropped and rebuilt around the load, as their definitions stand in the database
 * (the migrations'), which is much faster. Returns how many indexes were rebuilt. Shared by the v2
 * plans test and the bench's page measurements.
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
       SELECT g, 1 + h.pet % $2, 1 + h.quantity % 5,
              CASE WHEN h.dated % 50 = 0 THEN NULL
                   ELSE $3::timestamptz + h.instant % (2 * 365 * 86400000000::int8) * interval '1 microsecond'
              END,
              h.status >= 25 AND h.status < 85 AND h.complete % 5 < 4,
              CASE WHEN h.status < 25 THEN 'pending' WHEN h.status < 85 THEN 'shipped'
                   ELSE 'cancelled' END
         FROM generate_series(1, $1::int) AS g,
              LATERAL (SELECT abs(hashint8extended(g, 1)) AS pet,
                              abs(hashint8extended(g, 2)) AS quantity,
                              abs(hashint8extended(g, 3)) AS dated,
                              abs(hashint8extended(g, 4)) AS instant,
                              abs(hashint8extended(g, 5)) % 100 AS status,
                              abs(hashint8extended(g, 6)) AS complete) AS h`,
      [total, SPREAD_PETS, SPREAD_FROM],
    );
    for (const { definition } of indexes) await c.query(definition);
    await c.query('VACUUM ANALYZE orders');
    return indexes.length;
  });
}
