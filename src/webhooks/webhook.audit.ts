import { defineAuditActions } from '../audit/audit-actions';
import { defineEventObjects } from '../audit/audit-objects';
import { endpointsWithIds } from './webhook-endpoints.repository';
import { endpointJson } from './webhook-json';

/** What the audit trail records of webhook endpoints: every change, never a secret. */
export const WebhookAuditActions = defineAuditActions({
  CREATED: { name: 'webhook.created', description: 'A webhook endpoint was added' },
  CHANGED: { name: 'webhook.changed', description: 'A webhook endpoint was changed' },
  REMOVED: { name: 'webhook.removed', description: 'A webhook endpoint was removed' },
  ROTATED: { name: 'webhook.rotated', description: "A webhook endpoint's secret was replaced" },
});

/** The target of an event about an endpoint. */
export function webhookTarget(endpointId: string): string {
  return `webhook:${endpointId}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What an event about an endpoint carries: the Endpoint as the admin API shows it. */
defineEventObjects('webhook', async (ids, db) => {
  const wanted = ids.filter((id) => UUID.test(id));
  if (wanted.length === 0) return new Map<string, string>();
  const rows = await endpointsWithIds(db, wanted);
  return new Map(rows.map((row) => [row.id, JSON.stringify(endpointJson(row))]));
});
