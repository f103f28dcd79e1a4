import { withClient } from '../test/setup/clusters';

/** The largest int64: an order with this id and pet id is in every list the bench reads. */
export const INT64_MAX = '9223372036854775807';

/**
 * Grows the table to `total` orders: ids 1, 2, … plus one at INT64_MAX (so every list carries an
 * id beyond 2^53), every status, and nulls in each nullable column. Id 2 is cancelled.
 */
export async function growOrders(databaseUrl: string, total: number): Promise<void> {
  await withClient(databaseUrl, async (c) => {
    await c.query(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
       VALUES ($1, $1, 1, NULL, false, 'pending') ON CONFLICT (id) DO NOTHING`,
      [INT64_MAX],
    );
    const { rows } = await c.query<{ n: string }>('SELECT count(*) AS n FROM orders');
    const from = Number(rows[0].n);
    await c.query(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
       SELECT g,
              CASE WHEN g % 10 = 0 THEN NULL ELSE g * 7 END,
              CASE WHEN g % 10 = 1 THEN NULL ELSE g % 5 + 1 END,
              CASE WHEN g % 4 = 0 THEN NULL
                   ELSE timestamptz '2026-11-22T10:00:00Z' + g * interval '1 minute' END,
              g % 2 = 0,
              (ARRAY['pending', 'shipped', 'cancelled'])[g % 3 + 1]
         FROM generate_series($1::bigint, $2::bigint) AS g`,
      [from, total - 1],
    );
    await c.query('VACUUM ANALYZE orders');
  });
}
