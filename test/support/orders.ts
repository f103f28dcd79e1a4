import type { Pool } from 'pg';

export interface OrderFixture {
  id?: string;
  petId?: string | null;
  quantity?: number | null;
  shipDate?: string | null;
  complete?: boolean;
  status?: 'pending' | 'shipped' | 'cancelled';
}

/** Inserts orders as the store's other parts would; returns their ids as exact strings. */
export async function insertOrders(db: Pool, orders: OrderFixture[]): Promise<string[]> {
  const ids: string[] = [];
  for (const order of orders) {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status)
       VALUES (COALESCE($1::bigint, nextval(pg_get_serial_sequence('orders', 'id'))), $2, $3, $4, $5, $6)
       RETURNING id`,
      [
        order.id ?? null,
        order.petId ?? null,
        order.quantity ?? null,
        order.shipDate ?? null,
        order.complete ?? false,
        order.status ?? 'pending',
      ],
    );
    ids.push(rows[0].id);
  }
  return ids;
}

export async function statusOf(db: Pool, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [
    id,
  ]);
  return rows[0]?.status;
}
