import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { OrderStatus } from './order-status';

/**
 * A row of the `orders` table, shared with the parts of the store that place and ship orders.
 * int8 columns stay strings (as `pg` returns them) so no id is ever rounded through a JS number.
 */
@Entity({ name: 'orders' })
@Check('CHK_orders_status', `"status" IN ('pending', 'shipped', 'cancelled')`)
// The indexes of v2's pages: on columns an order keeps once placed, so cancelling and shipping
// stay heap-only updates (migration BoundOrderPageIndexes1764120000001).
@Index('IDX_orders_pet_id_id', ['petId', 'id'])
@Index('IDX_orders_ship_date_id', ['shipDate', 'id'])
@Index('IDX_orders_pet_id_ship_date_id', ['petId', 'shipDate', 'id'])
export class Order {
  @PrimaryGeneratedColumn('identity', {
    type: 'bigint',
    generatedIdentity: 'BY DEFAULT',
    primaryKeyConstraintName: 'PK_orders',
  })
  id!: string;

  @Column({ name: 'pet_id', type: 'bigint', nullable: true })
  petId!: string | null;

  @Column({ type: 'integer', nullable: true })
  quantity!: number | null;

  @Column({ name: 'ship_date', type: 'timestamptz', nullable: true })
  shipDate!: Date | null;

  @Column({ type: 'boolean', default: false })
  complete!: boolean;

  @Column({ type: 'text', default: 'pending' })
  status!: OrderStatus;
}
