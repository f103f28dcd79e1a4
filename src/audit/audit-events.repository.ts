import { DataSource, EntityManager } from 'typeorm';
import type { AuditAction } from './audit-actions';
import type { AuditEvent } from './audit-event';
import { RECORD_AUDIT_EVENT_SQL } from './audit-events.sql';

/** An event as it is written: what changed, who changed it, the request that asked. */
export interface AuditEventRecord {
  actor: string;
  action: AuditAction;
  target: string;
  requestId: string | null;
}

/** Exact matches, combined with AND; `before`: only the events of a lower id. */
export interface AuditEventFilter {
  action?: string;
  actor?: string;
  target?: string;
  before?: string;
}

interface AuditEventRow {
  id: string;
  at: Date;
  actor: string;
  action: AuditAction;
  target: string;
  request_id: string | null;
}

/** The `audit_events` table: events written within a change's transaction, read newest first. */
export class AuditEventsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Writes the event through `manager`, so in its transaction. */
  async insert(manager: EntityManager, event: AuditEventRecord): Promise<void> {
    await manager.query<unknown>(RECORD_AUDIT_EVENT_SQL, [
      event.actor,
      event.action,
      event.target,
      event.requestId,
    ]);
  }

  /**
   * At most `limit` events matching `filter`, newest first (by id, which follows the order the
   * events were written in): a backward range scan of the primary key, or of the index of the
   * filter given.
   */
  async newestFirst(filter: AuditEventFilter, limit: number): Promise<AuditEvent[]> {
    const conditions: string[] = [];
    const values: unknown[] = [];
    const where = (column: string, operator: string, value: string | undefined): void => {
      if (value === undefined) return;
      values.push(value);
      conditions.push(`${column} ${operator} $${values.length}`);
    };
    where('action', '=', filter.action);
    where('actor', '=', filter.actor);
    where('target', '=', filter.target);
    where('id', '<', filter.before);
    values.push(limit);
    const rows = await this.dataSource.query<AuditEventRow[]>(
      `SELECT id, at, actor, action, target, request_id FROM audit_events
        ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
        ORDER BY id DESC LIMIT $${values.length}`,
      values,
    );
    return rows.map((row) => ({
      id: row.id,
      at: row.at,
      actor: row.actor,
      action: row.action,
      target: row.target,
      requestId: row.request_id,
    }));
  }
}
