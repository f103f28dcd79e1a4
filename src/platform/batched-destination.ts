import pino, { type DestinationStream } from 'pino';

/** pino's own writer (sonic-boom), as `pino.destination` makes it, taking buffers. */
export type Writer = Pick<ReturnType<typeof pino.destination>, 'flush' | 'flushSync' | 'end'> & {
  write(data: Buffer): boolean;
};

/** Log bytes gathered before they are handed to the writer: under load, about 45 request lines. */
export const LOG_BATCH_BYTES = 16 * 1024;
/** Longest a line waits in the batch when traffic is too low to fill it. */
export const LOG_FLUSH_INTERVAL_MS = 200;

/**
 * pino's destination for the request log: lines are encoded (UTF-8) one after the other into a
 * batch buffer, handed to sonic-boom as one buffer per {@link LOG_BATCH_BYTES}, and every
 * {@link LOG_FLUSH_INTERVAL_MS}. sonic-boom still does the writing (partial writes, EAGAIN, a
 * closed pipe); this only spares it a call per line. Each line is encoded once, where a string
 * batch was measured again (`Buffer.byteLength`), joined and encoded by sonic-boom and by
 * `fs.write`; and sonic-boom's own buffering (`minLength`) measures its whole buffered text again
 * on each line it appends, which costs more than pino's serialisation of the line
 * (docs/performance.md).
 *
 * The reach: sonic-boom is given buffers (`contentMode: 'buffer'`, which its types do not name)
 * and its `flush`/`flushSync`/`end` are called directly. test/platform.e2e-spec.ts checks them on
 * the assembled application; what to check on an upgrade: docs/upgrading.md.
 *
 * Nothing is lost: `flush` and `flushSync` (pino's `logger.flush`, and the process's `exit`) hand
 * over the batch first.
 */
export class BatchedDestination implements DestinationStream {
  private batch = Buffer.allocUnsafe(LOG_BATCH_BYTES);
  private used = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly writer: Writer) {
    this.timer = setInterval(() => this.writeBatch(), LOG_FLUSH_INTERVAL_MS).unref();
    if (!process.listeners('exit').includes(flushAllSync)) process.on('exit', flushAllSync);
    open.add(this);
  }

  write(line: string): void {
    // A UTF-16 unit is at most 3 bytes of UTF-8: a line that may not fit goes in the next batch,
    // and one longer than a whole batch goes alone.
    if (this.used + line.length * 3 > LOG_BATCH_BYTES) {
      this.writeBatch();
      if (line.length * 3 > LOG_BATCH_BYTES) {
        this.writeOut(Buffer.from(line));
        return;
      }
    }
    this.used += this.batch.write(line, this.used);
  }

  /** Calls back once every line written so far has reached the file descriptor. */
  flush(callback: (error?: Error | null) => void): void {
    this.writeBatch();
    this.writer.flush(callback);
  }

  flushSync(): void {
    this.writeBatch();
    try {
      this.writer.flushSync();
    } catch {
      // Destroyed (stdout closed) or not yet open: nothing can be written, and logging must not throw.
    }
  }

  /** Stops the timer; what is still batched is handed over first. */
  end(): void {
    clearInterval(this.timer);
    open.delete(this);
    this.writeBatch();
    this.writer.end();
  }

  private writeBatch(): void {
    if (this.used === 0) return;
    const text = this.batch.subarray(0, this.used);
    // The writer keeps the buffer until it is written: the next batch gets one of its own.
    this.batch = Buffer.allocUnsafe(LOG_BATCH_BYTES);
    this.used = 0;
    this.writeOut(text);
  }

  private writeOut(text: Buffer): void {
    try {
      this.writer.write(text);
    } catch {
      // Destroyed (stdout closed): nothing can be written any more, and logging must not throw.
    }
  }
}

/**
 * The request log's destination on a file descriptor (stdout by default): a
 * {@link BatchedDestination} whose batches sonic-boom writes asynchronously, so a log reader that
 * falls behind never stalls the service (a synchronous sonic-boom sleeps 100 ms at a time on a
 * full non-blocking stdout, with the event loop held).
 *
 * `minLength: 1` writes each batch at once, as `0` would, and makes sonic-boom's `flush` wait
 * for the write in progress (with `0` it calls back at once, before the thread pool has written
 * anything): so `flushLogs` before an exit resolves only once every line is out, in order. An
 * exit that skips it (a `process.exit()` from elsewhere) still writes what is batched, but may
 * write it before a batch the thread pool has not finished (pinojs/sonic-boom#101).
 */
export function batchedDestination(fd = 1): BatchedDestination {
  const writer = pino.destination({ dest: fd, sync: false, minLength: 1, contentMode: 'buffer' });
  // A sonic-boom without one of these would fail on the first batch or, worse, at exit: at start.
  const missing = WRITER_METHODS.filter((name) => typeof writer[name] !== 'function');
  if (missing.length > 0) {
    throw new Error(
      `pino.destination() has no ${missing.join(', ')}: the request log's batches cannot be ` +
        'written (src/platform/batched-destination.ts, see docs/upgrading.md)',
    );
  }
  // In `contentMode: 'buffer'` sonic-boom writes buffers; its types name only strings.
  return new BatchedDestination(writer as unknown as Writer);
}

/** What {@link BatchedDestination} calls on sonic-boom. */
const WRITER_METHODS = ['write', 'flush', 'flushSync', 'end'] as const;

/** Destinations not ended: one `exit` listener for them all (a test process makes many). */
const open = new Set<BatchedDestination>();

/**
 * Lines still batched when the process exits without a flush (an uncaught error, an explicit
 * exit): written synchronously, as pino does for its own asynchronous destination.
 */
function flushAllSync(): void {
  for (const destination of open) destination.flushSync();
}
