import { defineAuditActions } from '../audit/audit-actions';

/** What the audit trail records of keys: every change, by the keys tool or the admin API. */
export const KeyAuditActions = defineAuditActions({
  CREATED: { name: 'key.created', description: 'A key was issued' },
  ROTATED: { name: 'key.rotated', description: 'A key was replaced by a new one' },
  REVOKED: { name: 'key.revoked', description: 'A key was revoked' },
  UNBANNED: { name: 'key.unbanned', description: "A key's ban was lifted" },
});

/** The target of an event about a key. */
export function keyTarget(keyId: string): string {
  return `key:${keyId}`;
}
