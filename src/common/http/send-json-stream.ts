import type { Response } from 'express';
import type { Readable } from 'node:stream';
import { flushCompressed } from './compression';

/**
 * Sends a JSON body that is either whole (a string: one write, with a Content-Length) or a stream
 * of JSON text, with back-pressure. If the client goes away, the stream is destroyed (releasing
 * whatever it holds); if it fails after the first byte, the connection is cut without the final
 * chunk, so no client can take a truncated body for a complete one.
 *
 * Compressed (see `compressResponses`), each chunk (a batch of the cursor) is flushed out of the
 * compressor as soon as it is written, so the first orders leave at once, not when the
 * compressor's buffer fills.
 *
 * `pipe()` with these two handlers rather than `stream.pipeline()`, which allocates an
 * AbortController (and a DOMException when it settles) per response: about twice the cost.
 */
export function sendJsonStream(
  res: Response,
  body: Readable | string,
  onError: (error: Error) => void,
): void {
  res.status(200).type('application/json');
  if (typeof body === 'string') {
    res.end(body);
    return;
  }
  body.once('error', (error) => {
    onError(error);
    res.destroy();
  });
  res.once('close', () => {
    if (!res.writableFinished) body.destroy();
  });
  body.pipe(res);
  // After pipe's own 'data' listener: the chunk has been written when this one runs.
  body.on('data', () => flushCompressed(res));
}
