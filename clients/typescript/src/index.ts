export {
  StoreOrdersClient,
  Orders,
  type CallOptions,
  type Order,
  type OrderFilters,
  type OrderId,
  type OrderPage,
  type OrderStatus,
  type RateLimit,
  type StoreOrdersClientOptions,
} from './client.js';
export { StoreOrdersError, StoreOrdersPagingError, type StoreOrdersErrorFields } from './errors.js';
export type { RetryOptions } from './retry.js';
export type * as AdminApi from './generated/admin.js';
export type * as V1Api from './generated/v1.js';
export type * as V2Api from './generated/v2.js';
