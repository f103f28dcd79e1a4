import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { statementRows } from '../database/statements';
import { type EndpointRow, firstReturned, returnedRows } from './webhook-json';
import {
  ACTIVE_ENDPOINT_COUNT_SQL,
  ACTIVE_ENDPOINT_SQL,
  ACTIVE_ENDPOINTS_SQL,
  CHANGE_ENDPOINT_SQL,
  DISABLE_ENDPOINT_SQL,
  ENDPOINT_FAILING_SQL,
  ENDPOINTS_WITH_IDS_SQL,
  INSERT_ENDPOINT_SQL,
  LOCK_ENDPOINT_SQL,
  NEW_ENDPOINT_LOCK_SQL,
  REMOVE_ENDPOINT_SQL,
  ROTATE_SECRET_SQL,
  SUBSCRIBED_ACTIONS,
} from './webhooks.sql';

/** A new endpoint's row: its secret sealed already. */
export interface NewEndpoint {
  url: string;
  events: string[];
  description: string | null;
  sealedSecret: string;
}

/** A change of an endpoint's fields: null (or undefined) leaves one as it is. */
export interface EndpointFields {
  url: string | null;
  events: string[] | null;
  /** Undefined: the description stays; null: it is cleared. */
  description: string | null | undefined;
  disabled: boolean | null;
}

/**
 * The `webhook_endpoints` table (its statements in webhooks.sql.ts), on TypeORM's DataSource. A
 * method that takes an EntityManager runs in that transaction ({@link transaction}); an
 * endpoint's pending deliveries are the deliveries' repository's.
 */
@Injectable()
export class WebhookEndpointsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` in a transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** The endpoints not removed, oldest first. */
  active(): Promise<EndpointRow[]> {
    return this.dataSource.query<EndpointRow[]>(ACTIVE_ENDPOINTS_SQL);
  }

  /** The endpoint of this id (a uuid), unless there is none or it was removed. */
  async activeOne(id: string): Promise<EndpointRow | undefined> {
    const rows = await this.dataSource.query<EndpointRow[]>(ACTIVE_ENDPOINT_SQL, [id]);
    return rows.at(0);
  }

  /**
   * How many endpoints there are (not removed), once no other transaction can add one until this
   * one ends: two new endpoints at once cannot both pass a limit.
   */
  async countForNew(manager: EntityManager): Promise<number> {
    await manager.query(NEW_ENDPOINT_LOCK_SQL);
    const [{ count }] = returnedRows<{ count: number }>(
      await manager.query(ACTIVE_ENDPOINT_COUNT_SQL),
    );
    return count;
  }

  async insert(manager: EntityManager, endpoint: NewEndpoint): Promise<EndpointRow> {
    const [row] = returnedRows<EndpointRow>(
      await manager.query(INSERT_ENDPOINT_SQL, [
        endpoint.url,
        endpoint.events,
        endpoint.description,
        endpoint.sealedSecret,
      ]),
    );
    return row;
  }

  /** The endpoint changed; undefined when there is none (or it was removed). */
  async change(
    manager: EntityManager,
    id: string,
    fields: EndpointFields,
  ): Promise<EndpointRow | undefined> {
    return firstReturned<EndpointRow>(
      manager.query(CHANGE_ENDPOINT_SQL, [
        id,
        fields.url,
        fields.events,
        fields.description !== undefined,
        fields.description ?? null,
        fields.disabled,
      ]),
    );
  }

  /**
   * Locks the endpoint's row to the end of the transaction: whether it was removed, or undefined
   * when there is no such endpoint.
   */
  async lockRemoved(manager: EntityManager, id: string): Promise<boolean | undefined> {
    const rows: { removed: boolean }[] = await manager.query(LOCK_ENDPOINT_SQL, [id]);
    return rows.at(0)?.removed;
  }

  async markRemoved(manager: EntityManager, id: string): Promise<void> {
    await manager.query(REMOVE_ENDPOINT_SQL, [id]);
  }

  /**
   * Replaces the endpoint's secret with `sealedSecret`, the old one signing too for
   * `graceSeconds` (0: not at all); undefined when there is no such endpoint.
   */
  async rotateSecret(
    manager: EntityManager,
    id: string,
    sealedSecret: string,
    graceSeconds: number,
  ): Promise<EndpointRow | undefined> {
    return firstReturned<EndpointRow>(
      manager.query(ROTATE_SECRET_SQL, [id, sealedSecret, graceSeconds]),
    );
  }

  /**
   * Marks the endpoint failing (since now, unless it was already): whether it has been failing
   * for more than `hours`.
   */
  async markFailing(manager: EntityManager, id: string, hours: number): Promise<boolean> {
    const rows = returnedRows<{ long: boolean }>(
      await manager.query(ENDPOINT_FAILING_SQL, [id, hours]),
    );
    return rows.length > 0 && rows[0].long;
  }

  /** Disables the endpoint for `reason`, unless it is disabled already. */
  async disable(manager: EntityManager, id: string, reason: string): Promise<void> {
    await manager.query(DISABLE_ENDPOINT_SQL, [id, reason]);
  }

  /** The actions some enabled endpoint subscribes to. */
  async subscribedActions(): Promise<string[]> {
    const rows = await statementRows<{ action: string }>(this.dataSource, SUBSCRIBED_ACTIONS);
    return rows.map((row) => row.action);
  }
}

/**
 * The endpoints of these ids (uuids), removed ones too: for the objects of their events, which
 * their consumers read with the DataSource they are given.
 */
export function endpointsWithIds(dataSource: DataSource, ids: string[]): Promise<EndpointRow[]> {
  return dataSource.query<EndpointRow[]>(ENDPOINTS_WITH_IDS_SQL, [ids]);
}
