import { CreateOrders1763800000000 } from './1763800000000-create-orders';
import { CreateApiKeys1763800100000 } from './1763800100000-create-api-keys';
import { ApiKeyLifecycle1763900000000 } from './1763900000000-api-key-lifecycle';

/** Every migration, oldest first. A new migration is generated into this folder and added here. */
export const migrations = [
  CreateOrders1763800000000,
  CreateApiKeys1763800100000,
  ApiKeyLifecycle1763900000000,
];
