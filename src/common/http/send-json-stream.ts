import type { Response } from 'express';
import { Readable, pipeline } from 'node:stream';

/**
 * Sends a stream of JSON text with back-pressure. If the client goes away, the source is destroyed
 * (releasing whatever it holds); if the source fails after the first byte, the connection is cut
 * without the final chunk, so no client can take a truncated body for a complete one.
 */
export function sendJsonStream(
  res: Response,
  body: Readable,
  onError: (error: Error) => void,
): void {
  res.status(200).type('application/json');
  pipeline(body, res, (error) => {
    if (!error) return;
    if (error.code !== 'ERR_STREAM_PREMATURE_CLOSE') onError(error);
    res.destroy();
  });
}
