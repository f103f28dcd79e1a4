import { hostname } from 'node:os';
import type { DestinationStream, Logger } from 'pino';

/** What the request log says of one request: pino-http's shape, with the route and the key's id. */
export interface RequestLogEntry {
  req: { id: string; method: string; url: string; remoteAddress: string | undefined };
  res: { statusCode: number };
  /** Milliseconds, rounded. */
  responseTime: number;
  route: string;
  /** The API key's id (never the key), when the request had a valid one. */
  keyId: string | undefined;
}

/** Writes a request's one line at level `info`; nothing when the level is above `info`. */
export type RequestLogWriter = (entry: RequestLogEntry, msg: string) => void;

/**
 * The request log's writer, on `logger`.
 *
 * With `destination`, the stream `logger` writes to (the application's JSON lines: no transport,
 * no mixin, no hook), each line is built here in one template: byte for byte the line
 * `logger.info(entry, msg)` writes (tested against pino itself), for about half of pino's work per
 * request. pino walks the object key by key, escapes each key and concatenates each piece; on a
 * cancel, its serialisation was the largest single cost the service adds to a request
 * (docs/performance.md). Lines go to the same destination as pino's, in call order.
 *
 * Without it (pretty logs in development; tracing on, where OpenTelemetry's pino instrumentation
 * adds the trace ids to each line as pino writes it), pino writes the line.
 */
export function requestLogWriter(
  logger: Logger,
  destination?: DestinationStream,
): RequestLogWriter {
  if (!destination) {
    return (entry, msg) => {
      if (logger.isLevelEnabled('info')) logger.info(entry, msg);
    };
  }
  // pino's own prefix and bindings (`base`: pid, hostname), as its default options write them.
  const level = `{"level":${logger.levels.values.info},"time":`;
  const bindings = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"req":{"id":`;
  return (entry, msg) => {
    if (!logger.isLevelEnabled('info')) return;
    const { req } = entry;
    const address =
      req.remoteAddress === undefined
        ? ''
        : `,"remoteAddress":${JSON.stringify(req.remoteAddress)}`;
    const keyId = entry.keyId === undefined ? '' : `,"keyId":${JSON.stringify(entry.keyId)}`;
    destination.write(
      `${level}${Date.now()}${bindings}${JSON.stringify(req.id)},"method":${JSON.stringify(req.method)},` +
        `"url":${JSON.stringify(req.url)}${address}},"res":{"statusCode":${entry.res.statusCode}},` +
        `"responseTime":${entry.responseTime},"route":${JSON.stringify(entry.route)}${keyId}` +
        `,"msg":${JSON.stringify(msg)}}\n`,
    );
  };
}
