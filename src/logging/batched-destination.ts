import pino, { type DestinationStream } from 'pino';

/** pino's own writer (sonic-boom), as `pino.destination` makes it. */
type Writer = ReturnType<typeof pino.destination>;

/** Log text gathered before it is handed to the writer: under load, about 50 request lines. */
export const LOG_BATCH_BYTES = 16 * 1024;
/** Longest a line waits in the batch when traffic is too low to fill it. */
export const LOG_FLUSH_INTERVAL_MS = 200;

/**
 * pino's destination for the request log: lines are gathered in a list and handed to sonic-boom
 * as one string per {@link LOG_BATCH_BYTES}, and every {@link LOG_FLUSH_INTERVAL_MS}. sonic-boom
 * still does the writing (partial writes, EAGAIN, a closed pipe); this only spares it a call per
 * line. Its own buffering (`minLength`) measures the whole buffered text again with
 * `Buffer.byteLength` on each line it appends: at 4 KiB, about 3 µs a line, more than pino's
 * serialisation of it (docs/performance.md).
 *
 * Nothing is lost: `flush` and `flushSync` (pino's `logger.flush`, and the process's `exit`) hand
 * over the batch first.
 */
export class BatchedDestination implements DestinationStream {
  private lines: string[] = [];
  private bytes = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly writer: Writer) {
    this.timer = setInterval(() => this.handOver(), LOG_FLUSH_INTERVAL_MS).unref();
    if (!process.listeners('exit').includes(flushAllSync)) process.on('exit', flushAllSync);
    open.add(this);
  }

  write(line: string): void {
    this.lines.push(line);
    // UTF-16 units, not bytes: the batch is a bound on waiting, not a buffer size.
    this.bytes += line.length;
    if (this.bytes >= LOG_BATCH_BYTES) this.handOver();
  }

  /** Calls back once every line written so far has reached the file descriptor. */
  flush(callback: (error?: Error | null) => void): void {
    this.handOver();
    this.writer.flush(callback);
  }

  flushSync(): void {
    this.handOver();
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
    this.handOver();
    this.writer.end();
  }

  private handOver(): void {
    if (this.lines.length === 0) return;
    const text = this.lines.join('');
    this.lines = [];
    this.bytes = 0;
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
  return new BatchedDestination(pino.destination({ dest: fd, sync: false, minLength: 1 }));
}

/** Destinations not ended: one `exit` listener for them all (a test process makes many). */
const open = new Set<BatchedDestination>();

/**
 * Lines still batched when the process exits without a flush (an uncaught error, an explicit
 * exit): written synchronously, as pino does for its own asynchronous destination.
 */
function flushAllSync(): void {
  for (const destination of open) destination.flushSync();
}
