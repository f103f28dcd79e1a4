import { ApiKey } from '../auth/api-key.entity';
import { Order } from '../orders/order.entity';

/** Every TypeORM entity of the service, shared by the application and the migration CLI. */
export const entities = [Order, ApiKey];
