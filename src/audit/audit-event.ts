/**
 * The audit trail's events: who changed what, when, and with which request. Written in the same
 * transaction as the change; read back newest first by `AuditTrail`.
 */
import type { AuditAction } from './audit-actions';

/**
 * Who made a change: `key:<id>` for a request made with an API key, `cli:<OS user>` for the
 * `keys` tool; and the id of the request (`X-Request-Id`) when the change came over HTTP.
 */
export interface AuditActor {
  actor: string;
  requestId?: string;
}

/** The actor of a request made with the key of this id. */
export function keyActor(keyId: string, requestId?: string): AuditActor {
  return { actor: `key:${keyId}`, requestId };
}

/** One event as read from the table. The id is a bigint, kept a string as `pg` returns it. */
export interface AuditEvent {
  id: string;
  at: Date;
  actor: string;
  action: AuditAction;
  target: string;
  requestId: string | null;
}

/** An event in JSON (the `keys audit --json` output and the admin API): nulls left out. */
export interface AuditEventJson {
  id: string;
  at: string;
  actor: string;
  action: AuditAction;
  target: string;
  requestId?: string;
}

export function auditEventJson(event: AuditEvent): AuditEventJson {
  const json: AuditEventJson = {
    id: event.id,
    at: event.at.toISOString(),
    actor: event.actor,
    action: event.action,
    target: event.target,
  };
  if (event.requestId !== null) json.requestId = event.requestId;
  return json;
}
