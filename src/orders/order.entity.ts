import { Check, Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { OrderStatus } from './order-status';

/**
 * A row of the `orders` table, shared with the parts of the store that place and ship orders.
 * int8 columns stay strings (as `pg` returns them) so no id is ever rounded through a JS number.
 */
@Entity({ name: 'orders' })
@Check('CHK_orders_status', `"status" IN ('pending', 'shipped', 'cancelled')`)
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
