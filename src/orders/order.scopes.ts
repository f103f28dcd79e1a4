import { defineScopes } from '../auth/scopes';

/** The scopes of the orders API: the same in v1 and v2. */
export const OrderScopes = defineScopes({
  READ: { name: 'orders:read', description: 'List the orders (v1 and v2)' },
  CANCEL: { name: 'orders:cancel', description: 'Cancel an order (v1 and v2)' },
});
