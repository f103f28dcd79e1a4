import { defineAuditActions } from '../audit/audit-actions';

/** What the audit trail records of orders: a cancellation that changed one. */
export const OrderAuditActions = defineAuditActions({
  CANCELLED: { name: 'order.cancelled', description: 'A pending order was cancelled' },
});
