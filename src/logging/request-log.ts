import type { Logger } from 'pino';

/** What the request log says of one request: pino-http's shape, with the route and the key's id. */
export interface RequestLogEntry {
  req: {
    /** The request id: a caller's token of `[A-Za-z0-9._:-]`, or a UUID (`requestId`). */
    id: string;
    method: string;
    /** Redacted (`redactUrl`). */
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
 * The request log's writer, on `logger`: pino serialises each line, so that every option the
 * logger is given (serializers, `redact`, mixins, hooks, formatters, bindings) and every plugin
 * (OpenTelemetry's trace ids) applies to request lines as to any other.
 */
export function requestLogWriter(logger: Logger): RequestLogWriter {
  return (entry, msg) => logger.info(entry, msg);
}
