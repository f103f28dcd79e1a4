import { AuditActor } from '../audit/audit-event';
import { AuditPage, AuditQuery, AuditRecord, AuditTrail } from '../audit/audit-trail';
import {
  ApiKeysRepository,
  familyOf,
  IssuedKey,
  IssueKeyRequest,
  KeySummary,
  Rotation,
} from './api-keys.repository';
import type { KeyCache } from './key-cache';
import { KeyAuditActions, keyTarget } from './key.audit';

export interface RotateKeyRequest {
  /** How long the old key keeps working (0: it is refused from now on). */
  graceMs: number;
  /** When the new key stops working; never when absent. */
  expiresAt?: Date;
}

/** The grace period of a rotation that names none: the old key keeps working for a day. */
export const DEFAULT_GRACE_MS = 24 * 3_600_000;

/**
 * Key administration: issue, rotate, revoke, unban, list, show, and the audit trail. The one
 * service the `keys` tool calls (and the admin API is a thin HTTP layer over), so both obey the
 * same rules. Each change takes an `actor` (`cli:<OS user>`, or `key:<id>` with the request's id)
 * and writes its event in the same transaction as the change: both are kept, or neither. A
 * request that changes nothing (revoking a revoked key, unbanning a key not banned) writes none.
 */
export class KeysService {
  constructor(
    private readonly store: ApiKeysRepository,
    private readonly trail: AuditTrail,
    /** This process's key cache, where it serves requests (not in the keys tool). */
    private readonly cache?: KeyCache,
  ) {}

  create(request: IssueKeyRequest, by: AuditActor): Promise<IssuedKey> {
    return this.store.transaction(async (manager) => {
      const issued = await this.store.issue(request, manager);
      await this.trail.record(manager, event(by, KeyAuditActions.CREATED, issued.id));
      return issued;
    });
  }

  /** Issues a replacement of the key; the event's target is the key replaced. */
  rotate(ref: string, request: RotateKeyRequest, by: AuditActor): Promise<Rotation> {
    return this.store.transaction(async (manager) => {
      const rotation = await this.store.rotate(ref, request.graceMs, request.expiresAt, manager);
      await this.trail.record(manager, event(by, KeyAuditActions.ROTATED, rotation.previous.id));
      return rotation;
    });
  }

  async revoke(ref: string, by: AuditActor): Promise<{ key: KeySummary; alreadyRevoked: boolean }> {
    const revoked = await this.store.transaction(async (manager) => {
      const revoked = await this.store.revoke(ref, manager);
      if (!revoked.alreadyRevoked) {
        await this.trail.record(manager, event(by, KeyAuditActions.REVOKED, revoked.key.id));
      }
      return revoked;
    });
    // Refused by this process at once, without waiting for the feed of key changes to say so
    // (other instances learn it from the feed).
    if (this.cache !== undefined && !revoked.alreadyRevoked) {
      this.cache.keyChanged(await this.store.hashOf(revoked.key.id));
    }
    return revoked;
  }

  /** Lifts the ban of the key's rotation family; the event's target is the key named. */
  unban(ref: string, by: AuditActor): Promise<{ key: KeySummary; wasBanned: boolean }> {
    return this.store.transaction(async (manager) => {
      const unbanned = await this.store.unban(ref, manager);
      if (unbanned.wasBanned) {
        await this.trail.record(manager, event(by, KeyAuditActions.UNBANNED, unbanned.key.id));
      }
      return unbanned;
    });
  }

  /** Every key, oldest first. */
  list(): Promise<KeySummary[]> {
    return this.store.list();
  }

  /** One key (by id or unique id prefix), and every key of its rotation family, oldest first. */
  async show(ref: string): Promise<{ key: KeySummary; family: KeySummary[] }> {
    const key = await this.store.find(ref);
    return { key, family: await this.store.family(familyOf(key)) };
  }

  /** A page of the audit trail, newest first. */
  audit(query: AuditQuery): Promise<AuditPage> {
    return this.trail.page(query);
  }
}

function event(by: AuditActor, action: AuditRecord['action'], keyId: string): AuditRecord {
  return { actor: by.actor, requestId: by.requestId, action, target: keyTarget(keyId) };
}
