import { Readable } from 'node:stream';
import { OrderRow, orderJson } from './order-json';
import { LIST_BATCH_SIZE } from './orders.sql';

/**
 * The orders after id `lastId`, by id, at most a batch of them. `wanted()` turns false once the
 * list has been abandoned (its client went away): a batch still waiting its turn is not read.
 */
export type OrdersAfter = (lastId: string, wanted: () => boolean) => Promise<OrderRow[]>;

const toError = (error: unknown): Error =>
  error instanceof Error ? error : new Error(String(error));
const jsonOf = (rows: OrderRow[]): string => rows.map(orderJson).join(',');

/** A list that came whole in its first batch, as one JSON array. */
export const wholeListJson = (rows: OrderRow[]): string => `[${jsonOf(rows)}]`;

/**
 * The order list as JSON text (one array), from its first rows, already read; the rest comes in
 * batches after the last id sent, one batch per `_read()`, so back-pressure reaches the database
 * and memory stays flat however large the table is: at most the batch being written and the next
 * one, asked for as soon as the previous one arrived full, so that the database round trip
 * overlaps with writing.
 *
 * Each batch is a query of its own (`ordersAfter`): between batches the list holds no database
 * connection, so a client that reads slowly, or not at all, costs the database nothing. A batch
 * that fails destroys the stream with its error; its connection is the pool's business.
 *
 * A hand-written Readable rather than an async generator under `Readable.from()`: the read-ahead
 * needs the control, and it costs less per chunk.
 */
export class OrderListStream extends Readable {
  /** The first batch, until pushed. */
  private first: OrderRow[] | undefined;
  /** The next batch, asked for and not yet pushed. */
  private next: Promise<OrderRow[]> | undefined;
  /** A `_read()` is waiting for `next`. */
  private waiting = false;
  private readonly wanted = (): boolean => !this.destroyed;

  constructor(
    first: OrderRow[],
    private readonly ordersAfter: OrdersAfter,
  ) {
    super();
    this.first = first;
    this.next = this.readAhead(first);
  }

  override _read(): void {
    const first = this.first;
    if (first !== undefined) {
      this.first = undefined;
      this.push(`[${jsonOf(first)}`);
      return;
    }
    const { next } = this;
    if (!next || this.waiting) return;
    this.waiting = true;
    next.then(
      (rows) => {
        this.waiting = false;
        if (this.destroyed) return;
        // Fewer rows than asked for: that was the end of the list.
        const last = rows.length < LIST_BATCH_SIZE;
        this.next = last ? undefined : this.readAhead(rows);
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

  /** Asks for the batch after `rows`; a failure is handled by whoever awaits it (or nobody). */
  private readAhead(rows: OrderRow[]): Promise<OrderRow[]> {
    const batch = this.ordersAfter(rows[rows.length - 1][0], this.wanted);
    batch.catch(() => undefined);
    return batch;
  }
}
