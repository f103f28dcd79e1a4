import { hostname } from 'node:os';
import type { DestinationStream, Logger } from 'pino';

/**
 * What the request log says of one request: pino-http's shape, with the route and the key's id.
 * Every string but `url` and `route` is one no JSON string needs to escape, by where it comes from.
 */
export interface RequestLogEntry {
  req: {
    /** The request id: a caller's token of `[A-Za-z0-9._:-]`, or a UUID (`requestId`). */
    id: string;
    /** As Node's HTTP parser accepted it: a method of its table (`GET`, `DELETE` ...). */
    method: string;
    url: string;
    /** The socket's IP address. */
    remoteAddress: string | undefined;
  };
  res: { statusCode: number };
  /** Milliseconds, rounded. */
  responseTime: number;
  route: string;
  /** The API key's id (a UUID, never the key), when the request had a valid one. */
  keyId: string | undefined;
}

/** Writes a request's one line at level `info`; nothing when the level is above `info`. */
export type RequestLogWriter = (entry: RequestLogEntry, msg: string) => void;

/**
 * The request log's writer, on `logger`.
 *
 * With `destination`, the stream `logger` writes to (the application's JSON lines: no transport,
 * no mixin, no hook), each line is built here in one template: byte for byte the line
 * `logger.info(entry, msg)` writes, without pino's walk of the object key by key. It knows pino's
 * line (level, time, pid, hostname, then the object's keys, then `msg`) and none of the logger's
 * options but its level: an option that changes a request line (`redact`, a serializer of `req`,
 * a mixin, formatters …) fails the comparison with pino in `request-log.spec.ts` (a logger made
 * with the application's own options), and the assembled application's lines are compared with
 * pino's by `test/platform.e2e-spec.ts`.
 * Only the strings that can need it are escaped (`url`, `route`: the others need none, see
 * {@link RequestLogEntry}; `msg` is one of the observer's constants), and the line's head is built
 * once per millisecond. Why it stays: docs/performance.md; on an upgrade: docs/upgrading.md.
 *
 * Without it (pretty logs in development; tracing on, where OpenTelemetry's pino instrumentation
 * adds the trace ids to each line as pino writes it), pino writes the line.
 */
export function requestLogWriter(
  logger: Logger,
  destination?: DestinationStream,
): RequestLogWriter {
  if (!destination) {
    return (entry, msg) => logger.info(entry, msg);
  }
  // pino's own prefix and bindings (`base`: pid, hostname), as its default options write them.
  const level = `{"level":${logger.levels.values.info},"time":`;
  const bindings = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"req":{"id":"`;
  let headAt = 0;
  let head = '';
  return (entry, msg) => {
    if (!logger.isLevelEnabled('info')) return;
    const now = Date.now();
    if (now !== headAt) {
      headAt = now;
      head = `${level}${now}${bindings}`;
    }
    const { req } = entry;
    const address =
      req.remoteAddress === undefined ? '' : `,"remoteAddress":"${req.remoteAddress}"`;
    const keyId = entry.keyId === undefined ? '' : `,"keyId":"${entry.keyId}"`;
    destination.write(
      `${head}${req.id}","method":"${req.method}","url":${JSON.stringify(req.url)}${address}},` +
        `"res":{"statusCode":${entry.res.statusCode}},"responseTime":${entry.responseTime},` +
        `"route":${JSON.stringify(entry.route)}${keyId},"msg":"${msg}"}\n`,
    );
  };
}
