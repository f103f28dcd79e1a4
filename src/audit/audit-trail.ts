import type { EntityManager } from 'typeorm';
import { AUDIT_ACTION_NAMES, AuditAction, isAuditAction } from './audit-actions';
import { decodeAuditCursor, encodeAuditCursor } from './audit-cursor';
import { AuditActor, AuditEvent, auditEventJson, AuditEventJson } from './audit-event';
import { AuditEventsRepository } from './audit-events.repository';

/** Events per page when the query does not say. */
export const DEFAULT_AUDIT_PAGE_SIZE = 50;
export const MAX_AUDIT_PAGE_SIZE = 1000;

/** A page of the trail: these filters (exact matches, combined with AND), after this cursor. */
export interface AuditQuery {
  action?: string;
  actor?: string;
  target?: string;
  /** 1 to {@link MAX_AUDIT_PAGE_SIZE}; {@link DEFAULT_AUDIT_PAGE_SIZE} when absent. */
  limit?: number;
  /** The `nextCursor` of the page before. */
  cursor?: string;
}

/** Newest first; `nextCursor` is there exactly when `hasMore` is. */
export interface AuditPage {
  data: AuditEvent[];
  hasMore: boolean;
  nextCursor?: string;
}

/** A page in JSON (`keys audit --json`, the admin API): `{data, hasMore, nextCursor?}`. */
export function auditPageJson(page: AuditPage): {
  data: AuditEventJson[];
  hasMore: boolean;
  nextCursor?: string;
} {
  const data = page.data.map(auditEventJson);
  return page.nextCursor === undefined
    ? { data, hasMore: page.hasMore }
    : { data, hasMore: page.hasMore, nextCursor: page.nextCursor };
}

/** C0 (NUL included), DEL and C1. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/** A query the trail cannot answer (the message names the part); nothing was read. */
export class InvalidAuditQueryError extends Error {}

/** An event to record: what changed, and who changed it. */
export interface AuditRecord extends AuditActor {
  action: AuditAction;
  target: string;
}

/**
 * The audit trail (table `audit_events`, read and written by AuditEventsRepository): append-only,
 * enforced by the database (its migration). Events are recorded through the transaction of the change they describe, so the two commit or
 * roll back together; a change made by one statement records its events in that statement
 * (`auditEventsOfRows`, as the cancel of an order does).
 */
export class AuditTrail {
  constructor(private readonly events: AuditEventsRepository) {}

  /** Records the event within the transaction of `manager`. */
  async record(manager: EntityManager, event: AuditRecord): Promise<void> {
    if (!manager.queryRunner?.isTransactionActive) {
      // An event written outside the change's transaction could outlive a change rolled back.
      throw new Error('an audit event is recorded in the transaction of its change');
    }
    if (!isAuditAction(event.action))
      throw new Error(`${event.action} is not a declared audit action`);
    await this.events.insert(manager, { ...event, requestId: event.requestId ?? null });
  }

  /**
   * One page of events, newest first (by id, which follows the order the events were written
   * in): a backward range scan of the primary key, or of the index of the filter given.
   */
  async page(query: AuditQuery): Promise<AuditPage> {
    const limit = query.limit ?? DEFAULT_AUDIT_PAGE_SIZE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_PAGE_SIZE) {
      throw new InvalidAuditQueryError(
        `limit must be a whole number from 1 to ${MAX_AUDIT_PAGE_SIZE}; got ${limit}`,
      );
    }
    for (const [name, value] of Object.entries({ actor: query.actor, target: query.target })) {
      // PostgreSQL refuses NUL in text, and no actor or target holds a control character.
      if (value !== undefined && CONTROL_CHARACTER.test(value)) {
        throw new InvalidAuditQueryError(`${name} must not contain control characters`);
      }
    }
    if (query.action !== undefined && !isAuditAction(query.action)) {
      throw new InvalidAuditQueryError(
        `action must be one of ${AUDIT_ACTION_NAMES.join(', ')}; got "${query.action}"`,
      );
    }
    let before: string | undefined;
    if (query.cursor !== undefined) {
      try {
        before = decodeAuditCursor(query.cursor);
      } catch (error) {
        throw new InvalidAuditQueryError(error instanceof Error ? error.message : String(error));
      }
    }
    const { action, actor, target } = query;
    const rows = await this.events.newestFirst({ action, actor, target, before }, limit + 1);
    const hasMore = rows.length > limit;
    const data = rows.slice(0, limit);
    return hasMore
      ? { data, hasMore, nextCursor: encodeAuditCursor(data[data.length - 1].id) }
      : { data, hasMore };
  }
}
