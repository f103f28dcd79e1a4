import type { Pool, PoolClient } from 'pg';
import { configInheriting } from './statement-call';
import type { NamedStatement } from './statements';

/** PostgreSQL's `query_canceled`: a statement that ran out of its connection's statement timeout. */
const QUERY_CANCELED = '57014';

/** Whether a statement failed because its time ran out (its connection is still sound). */
export function isStatementCancelled(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === QUERY_CANCELED;
}

/** No connection of a {@link StatementPool} came within the wait its work allowed. */
export class ConnectionWaitExpiredError extends Error {
  constructor(readonly waitMs: number) {
    super(`no connection within ${waitMs} ms`);
    this.name = 'ConnectionWaitExpiredError';
  }
}

/** A connection lent for one piece of work: its statements run on it one after the other. */
export interface StatementConnection {
  /** The rows of `statement` (a named one, or a text sent as it is) with `values`. */
  rows<R>(statement: NamedStatement | string, values?: unknown[]): Promise<R[]>;
}

/**
 * A pool of connections of its own (`DatabasePools.createStatementPool`), for work that runs a
 * few statements on one connection and may wait only so long for it.
 */
export class StatementPool {
  /** The pg pool: for the tests that look at its connections; features use `run`. */
  constructor(readonly pool: Pool) {}

  /**
   * Runs `work` on a connection taken within `waitMs` (else ConnectionWaitExpiredError; one that
   * comes later is given back at once). The connection goes back to the pool after the work,
   * also when a statement ran out of its time (PostgreSQL cancelled it; the connection is
   * sound), and is closed instead when the work failed otherwise.
   */
  async run<T>(waitMs: number, work: (connection: StatementConnection) => Promise<T>): Promise<T> {
    const client = await this.connect(waitMs);
    let broken: Error | undefined;
    try {
      return await work(connectionOf(client));
    } catch (error) {
      if (error instanceof Error && !isStatementCancelled(error)) broken = error;
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /**
   * The rows of one statement on whichever connection is free, waiting for one as pg does (at
   * most DATABASE_CONNECT_TIMEOUT_MS): a connection whose statement failed is closed.
   */
  async rows<R>(statement: NamedStatement | string, values?: unknown[]): Promise<R[]> {
    const config = typeof statement === 'string' ? statement : configInheriting(statement);
    const { rows } = await this.pool.query(config, values);
    return rows as R[];
  }

  /**
   * Runs `work` in a transaction on one connection (waiting for it as pg does): committed when
   * `work` resolves, rolled back when it throws, and then the connection is closed, not given back.
   */
  async transaction<T>(work: (connection: StatementConnection) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(connectionOf(client));
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(error instanceof Error ? error : true);
      throw error;
    }
  }

  /** pg's own connect timeout (DATABASE_CONNECT_TIMEOUT_MS) is the longer bound. */
  private async connect(waitMs: number): Promise<PoolClient> {
    const connecting = this.pool.connect();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), waitMs);
    });
    try {
      const client = await Promise.race([connecting, late]);
      if (client !== undefined) return client;
      connecting.then(
        (c) => c.release(),
        () => undefined,
      );
      throw new ConnectionWaitExpiredError(waitMs);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Opens every connection of the pool and runs `warm` on each, all of them held at once so that
   * each one runs it; resolves with why one could not be opened or warmed, if any (undefined once
   * the pool is closed: nothing to say). A connection whose warming failed otherwise than by its
   * statement timeout is closed instead of kept.
   */
  async open(
    warm: (connection: StatementConnection) => Promise<unknown> = () => Promise.resolve(),
  ): Promise<unknown> {
    const opening = Array.from({ length: this.pool.options.max }, () => this.pool.connect());
    const opened = await Promise.allSettled(opening);
    const clients = opened.flatMap((result) =>
      result.status === 'fulfilled' ? [result.value] : [],
    );
    const warmed = await Promise.allSettled(clients.map((client) => warm(connectionOf(client))));
    clients.forEach((client, i) => {
      const result = warmed[i];
      const broken = result.status === 'rejected' && !isStatementCancelled(result.reason);
      client.release(broken ? (result.reason as Error) : undefined);
    });
    const failed = [...opened, ...warmed].find((result) => result.status === 'rejected');
    return failed === undefined || this.pool.ended ? undefined : (failed.reason as unknown);
  }
}

function connectionOf(client: PoolClient): StatementConnection {
  return {
    async rows<R>(statement: NamedStatement | string, values?: unknown[]): Promise<R[]> {
      const config = typeof statement === 'string' ? statement : configInheriting(statement);
      const { rows } = await client.query(config, values);
      return rows as R[];
    },
  };
}
