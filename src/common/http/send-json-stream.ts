import type { BeforeApplicationShutdown } from '@nestjs/common';
import type { Response } from 'express';
import type { Readable } from 'node:stream';
import { ClientProgress } from './client-progress';
import { flushCompressed } from './compression';
import { setJsonContentType } from './json-content-type';

export interface JsonStreamSettings {
  /** How long a client may take none of a response before it is cut (`HTTP_STALL_TIMEOUT_MS`). */
  stallTimeoutMs: number;
  /** The shutdown's deadline and drain delay (`SHUTDOWN_TIMEOUT_MS`, `SHUTDOWN_DRAIN_DELAY_MS`). */
  shutdown: { timeoutMs: number; drainDelayMs: number };
}

/** What the sender reports about a streamed body after its first byte; the connection is cut. */
export interface JsonStreamEvents {
  /** The body failed. */
  onError(error: Error): void;
  /** The client took none of the response for `stalledMs`. */
  onStall(stalledMs: number): void;
}

/** How many times per stall limit the sender looks at what waiting clients took. */
const LOOKS_PER_LIMIT = 10;

/**
 * Cuts a response whose client has taken none of it for the stall limit. It runs only while the
 * response waits on the client (what was written has not all reached the kernel), never while the
 * body waits for the database. The sender looks at what the client has taken (`ClientProgress`)
 * a few times per limit: whatever the client took since the last look starts the limit afresh.
 */
class StallWatch {
  /** Since when the client is known to have taken none of the response (from a look, or the start). */
  quietSince = 0;
  /** The client's mark at the last look (`ClientProgress`), once looked at. */
  mark: string | undefined;
  private waiting = false;
  /** The response is over: nothing to wait for any more. */
  private over = false;

  constructor(
    readonly res: Response,
    private readonly sender: JsonStreamSender,
    readonly cut: (stalledMs: number) => void,
  ) {}

  /** The response waits on the client from now, unless it already did. */
  start(): void {
    if (this.waiting || this.over) return;
    this.waiting = true;
    this.quietSince = performance.now();
    this.mark = undefined;
    this.sender.watch(this);
  }

  stop(): void {
    if (!this.waiting) return;
    this.waiting = false;
    this.sender.unwatch(this);
  }

  end(): void {
    this.over = true;
    this.stop();
  }
}

/**
 * Makes the body of a JSON answer: called only when a body is to be sent. A list reads the
 * database here, and only here, so that a `HEAD` of the route, which has no body, reads nothing.
 */
export type JsonBodySource = () => Promise<Readable | string>;

/**
 * Answers a `HEAD` of a JSON route with the head of its `GET`: 200, the JSON Content-Type, and
 * every header set before (the request's id, the rate limits, the route's links); no
 * Content-Length, as that would need the body. True if it did; false for any other method.
 *
 * Express runs a route's `GET` handler for `HEAD`, and Node drops what is written: without this, a
 * `HEAD` of a list read and serialised every order for nothing. Whatever comes before the body
 * (guards, pipes, the handler's own checks) has run by then, so a `HEAD` is refused exactly as its
 * `GET` would be.
 */
export function answeredHead(res: Response): boolean {
  if (res.req.method !== 'HEAD') return false;
  res.status(200);
  setJsonContentType(res);
  res.end();
  return true;
}

/** Answers 200 with a whole JSON body, made only for a `GET` (see {@link answeredHead}). */
export function sendJson(res: Response, json: () => string): void {
  if (answeredHead(res)) return;
  res.status(200);
  setJsonContentType(res);
  res.end(json());
}

/**
 * Sends JSON bodies that are either whole (a string: one write, with a Content-Length) or a stream
 * of JSON text, with back-pressure. If the client goes away, the stream is destroyed (releasing
 * whatever it holds); if it fails after the first byte, the connection is cut without the final
 * chunk, so no client can take a truncated body for a complete one.
 *
 * A client that keeps reading gets the whole body however long it takes, slowly too; one that
 * takes none of it for `HTTP_STALL_TIMEOUT_MS` is cut off, and the stream destroyed. What a client
 * took is what its TCP acknowledged (`ClientProgress`), not what `drain` says: a slow reader may
 * see no `drain` for longer than the limit. Once the application shuts down, that limit drops to
 * half of what is left of the shutdown's deadline, so stalled clients never hold a shutdown past it
 * while clients that read still get their lists whole.
 *
 * Compressed (see `compressResponses`), each chunk (a batch of the list) is flushed out of the
 * compressor as soon as it is written, so the first orders leave at once, not when the
 * compressor's buffer fills.
 *
 * The stream is piped by hand, pausing it when the response says to wait and resuming it on
 * `drain`: those are the moments the response waits on the client. (`stream.pipeline()` would
 * also allocate an AbortController, and a DOMException when it settles, per response.)
 *
 * The body comes from a {@link JsonBodySource}, asked for only when there is a body to send: a
 * `HEAD` is answered its head at once (see {@link answeredHead}), and its list is never read.
 *
 * A provider of every module (AppModule builds it from the configuration), so that Nest calls
 * its shutdown hook.
 */
export class JsonStreamSender implements BeforeApplicationShutdown {
  /** The current stall limit. */
  stallLimitMs: number;
  /** The watches of responses now waiting on their clients. */
  readonly watches = new Set<StallWatch>();
  private readonly shutdownStallLimitMs: number;
  private readonly progress = new ClientProgress();
  /** The next look at the waiting clients, while any wait. */
  private nextLook: NodeJS.Timeout | undefined;
  private looking = false;

  constructor(settings: JsonStreamSettings) {
    this.stallLimitMs = settings.stallTimeoutMs;
    const { timeoutMs, drainDelayMs } = settings.shutdown;
    // app.close() (and so this hook) comes after the drain delay: half of what is left.
    this.shutdownStallLimitMs = Math.max(1000, Math.floor((timeoutMs - drainDelayMs) / 2));
  }

  /**
   * Answers 200 with the body `source` makes, once it has made it: a source that fails (a
   * database that is down) fails here, before any byte is sent, and gets a proper error response.
   */
  async send(res: Response, source: JsonBodySource, events: JsonStreamEvents): Promise<void> {
    if (answeredHead(res)) return;
    const body = await source();
    res.status(200);
    setJsonContentType(res);
    if (typeof body === 'string') {
      res.end(body);
      return;
    }
    const watch = new StallWatch(res, this, (stalledMs) => {
      events.onStall(stalledMs);
      res.destroy();
    });
    body.on('data', (chunk: Buffer) => {
      if (!res.write(chunk)) {
        body.pause();
        watch.start();
      }
      flushCompressed(res);
    });
    res.on('drain', () => {
      watch.stop();
      body.resume();
    });
    body.once('end', () => {
      res.end();
      // What is left is in the response's buffers: the client still has to take it.
      if (!res.writableFinished) watch.start();
    });
    body.once('error', (error) => {
      watch.end();
      events.onError(error);
      res.destroy();
    });
    res.once('close', () => {
      watch.end();
      if (!res.writableFinished) body.destroy();
    });
  }

  beforeApplicationShutdown(): void {
    this.stallLimitMs = Math.min(this.stallLimitMs, this.shutdownStallLimitMs);
    // The next look comes as often as the shorter limit wants.
    clearTimeout(this.nextLook);
    this.nextLook = undefined;
    this.scheduleLook();
  }

  watch(watch: StallWatch): void {
    this.watches.add(watch);
    this.scheduleLook();
  }

  unwatch(watch: StallWatch): void {
    this.watches.delete(watch);
    if (this.watches.size > 0) return;
    clearTimeout(this.nextLook);
    this.nextLook = undefined;
  }

  /** The next look: a few times per limit, and when the first waiting client reaches the limit. */
  private scheduleLook(): void {
    if (this.nextLook || this.looking || this.watches.size === 0) return;
    let quietSince = Infinity;
    for (const watch of this.watches) quietSince = Math.min(quietSince, watch.quietSince);
    const untilLimit = quietSince + this.stallLimitMs - performance.now();
    this.nextLook = setTimeout(
      () => {
        this.nextLook = undefined;
        void this.look();
      },
      Math.max(0, Math.min(this.stallLimitMs / LOOKS_PER_LIMIT, untilLimit)),
    );
  }

  /**
   * One look at every waiting client: one whose mark moved took some of its response; one that
   * has been seen to take none of it for the limit is cut. A client is credited from the look that
   * saw it take something, never earlier: one that stops reading is cut at most a look late.
   */
  private async look(): Promise<void> {
    this.looking = true;
    try {
      const watches = [...this.watches];
      const lookedAt = performance.now();
      const marks = await this.progress.marks(watches.map((watch) => watch.res.socket));
      const now = performance.now();
      watches.forEach((watch, i) => {
        // It may have stopped waiting, or started afresh, while the kernel was read.
        if (!this.watches.has(watch) || watch.quietSince > lookedAt) return;
        // The first look has nothing to compare with: the client may have taken some just before.
        if (watch.mark !== marks[i]) watch.quietSince = lookedAt;
        watch.mark = marks[i];
        const stalledMs = now - watch.quietSince;
        if (stalledMs < this.stallLimitMs) return;
        watch.end();
        watch.cut(Math.round(stalledMs));
      });
    } finally {
      this.looking = false;
      this.scheduleLook();
    }
  }
}
