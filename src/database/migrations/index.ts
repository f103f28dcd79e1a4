import { CreateOrders1763800000000 } from './1763800000000-create-orders';

/** Every migration, oldest first. A new migration is generated into this folder and added here. */
export const migrations = [CreateOrders1763800000000];
