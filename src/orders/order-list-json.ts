import { Readable } from 'node:stream';
import type { PoolClient } from 'pg';
import type Cursor from 'pg-cursor';
import { OrderRow, orderJson } from './order-json';
import { LIST_BATCH_SIZE } from './orders.sql';

/** A list's connection and open cursor, held until the list is read to its end or abandoned. */
export interface ListCursor {
  client: PoolClient;
  cursor: Cursor<OrderRow>;
}

const toError = (error: unknown): Error =>
  error instanceof Error ? error : new Error(String(error));
const jsonOf = (rows: OrderRow[]): string => rows.map(orderJson).join(',');

/** A list that came whole in its first batch, as one JSON array. */
export const wholeListJson = (rows: OrderRow[]): string => `[${jsonOf(rows)}]`;

/**
 * The order list as JSON text (one array), from its first rows, already read; the rest comes from
 * the cursor, one batch per `_read()`, so back-pressure reaches the database and memory stays flat
 * however large the table is: at most the batch being written and the next one, asked for as soon
 * as the previous one arrived full, so that the database round trip overlaps with writing.
 *
 * A hand-written Readable rather than an async generator under `Readable.from()`: the read-ahead
 * and the early release need the control, and it costs less per chunk.
 *
 * The connection goes back to the pool as soon as the last batch has arrived (pg-cursor has closed
 * the portal by then). Destroyed early (the client went away), the stream closes the cursor and
 * releases the connection; after a failed read it releases the connection as broken.
 */
export class OrderListJson extends Readable {
  /** The connection and cursor, until released. */
  private source: ListCursor | undefined;
  /** The first batch, until pushed. */
  private first: OrderRow[] | undefined;
  /** The next batch, asked for and not yet pushed. */
  private next: Promise<OrderRow[]> | undefined;
  /** A `_read()` is waiting for `next`. */
  private waiting = false;
  private connectionEnded = false;
  /** Fails the read or close in flight (there is at most one) when the connection ends. */
  private failInFlight: ((error: Error) => void) | undefined;

  constructor(first: OrderRow[], source: ListCursor) {
    super();
    this.first = first;
    this.source = source;
    source.client.once('end', this.handleConnectionEnd);
    this.next = this.readAhead(source);
  }

  override _read(): void {
    const first = this.first;
    if (first !== undefined) {
      this.first = undefined;
      this.push(`[${jsonOf(first)}`);
      return;
    }
    const { source, next } = this;
    if (!source || !next || this.waiting) return;
    this.waiting = true;
    next.then(
      (rows) => {
        this.waiting = false;
        if (this.destroyed) return;
        // Fewer rows than asked for: the cursor is exhausted and already closed.
        const last = rows.length < LIST_BATCH_SIZE;
        if (last) {
          this.next = undefined;
          this.release(source, false);
        } else {
          this.next = this.readAhead(source);
        }
        this.push(`${rows.length > 0 ? `,${jsonOf(rows)}` : ''}${last ? ']' : ''}`);
        if (last) this.push(null);
      },
      (error: unknown) => {
        this.waiting = false;
        this.next = undefined;
        this.destroy(toError(error));
      },
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const source = this.source;
    if (!source) {
      callback(error);
      return;
    }
    this.abandon(source, error).then(
      () => {
        callback(error);
      },
      (failure: unknown) => {
        callback(toError(failure));
      },
    );
  }

  /** The list was not read to its end: free its cursor and connection. */
  private async abandon(source: ListCursor, error: Error | null): Promise<void> {
    let failure = error ?? undefined;
    // pg-cursor cannot close under a read in flight: let it finish.
    try {
      await this.next;
    } catch (readError) {
      failure ??= toError(readError);
    }
    if (failure) {
      // A failed read leaves a connection that may be gone: pg closes it when released as
      // broken, which ends the portal too. pg-cursor's close() would wait for a ReadyForQuery
      // that a server gone away (e.g. pg_terminate_backend) never sends, and the connection
      // would never return to the pool.
      this.release(source, failure);
      return;
    }
    this.release(source, await this.closeCursor(source));
  }

  /** Closes the cursor; gives up (with the reason) if the connection is lost meanwhile. */
  private closeCursor(source: ListCursor): Promise<Error | undefined> {
    return this.unlessLost(source.cursor.close()).then(() => undefined, toError);
  }

  /** Asks for the next batch; a failure is handled by whoever awaits it (or by the close). */
  private readAhead(source: ListCursor): Promise<OrderRow[]> {
    // Execute and Flush in one write.
    const { stream } = source.client.connection;
    stream.cork();
    const batch = this.unlessLost(source.cursor.read(LIST_BATCH_SIZE));
    stream.uncork();
    batch.catch(() => undefined);
    return batch;
  }

  /**
   * `operation` (a read or the close), failing if the connection ends first: pg-cursor never
   * answers a read whose connection dies between the last batch's CommandComplete and its
   * ReadyForQuery (it ignores errors once its portal is closed), and the list would hang,
   * holding its connection, forever. Not `Promise.race` with one promise of the whole list's
   * life: each race would stay subscribed to it, and keep its batch, until the list ends (a
   * list of 1,000,000 orders grew by 300 MB).
   */
  private unlessLost<T>(operation: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      operation.then(resolve, reject).finally(() => {
        if (this.failInFlight === reject) this.failInFlight = undefined;
      });
      if (this.connectionEnded) reject(new Error('database connection lost'));
      else this.failInFlight = reject;
    });
  }

  private release(source: ListCursor, failure: Error | false | undefined): void {
    if (this.source !== source) return;
    this.source = undefined;
    source.client.removeListener('end', this.handleConnectionEnd);
    source.client.release(failure ?? false);
  }

  private readonly handleConnectionEnd = (): void => {
    this.connectionEnded = true;
    this.failInFlight?.(new Error('database connection lost mid-list'));
  };
}
