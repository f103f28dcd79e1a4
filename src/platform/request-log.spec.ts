import pino, { type DestinationStream } from 'pino';
import type { LogLevel } from '../logging/logging.settings';
import { loggerOptions } from '../logging/logging.module';
import { requestLogWriter, type RequestLogEntry } from './request-log';

/** A destination that keeps what it is given. */
function recording(): DestinationStream & { lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (line: string) => void lines.push(line) };
}

const entry = (overrides: Partial<RequestLogEntry> = {}): RequestLogEntry => ({
  req: {
    id: 'b7c1f0a2-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
    method: 'DELETE',
    url: '/v1/store/orders/2',
    remoteAddress: '::ffff:127.0.0.1',
  },
  res: { statusCode: 204 },
  responseTime: 3,
  route: '/v1/store/orders/:orderId',
  keyId: '0d6f4b0e-8f33-4c6e-9a53-2f1d1b7c9e10',
  ...overrides,
});

/**
 * The line pino writes for `logger.info(entry, msg)`, and the writer's line, at the same time, on
 * loggers made with the application's options: an option the template does not honour (one that
 * changes a request line: `redact`, a serializer of `req`, a mixin, formatters …) fails here.
 */
function bothLines(level: LogLevel, e: RequestLogEntry, msg: string): [string[], string[]] {
  const viaPino = recording();
  const own = recording();
  const now = jest.spyOn(Date, 'now').mockReturnValue(1_764_000_000_123);
  try {
    pino(loggerOptions(level), viaPino).info(e, msg);
    const logger = pino(loggerOptions(level), own);
    requestLogWriter(logger, own)(e, msg);
  } finally {
    now.mockRestore();
  }
  return [viaPino.lines, own.lines];
}

describe('requestLogWriter', () => {
  it.each([
    ['a cancel with a key', entry(), 'request completed'],
    [
      'a request without a key',
      entry({ keyId: undefined, res: { statusCode: 401 } }),
      'request completed',
    ],
    [
      'a request whose socket had already closed',
      entry({ req: { ...entry().req, remoteAddress: undefined } }),
      'request aborted',
    ],
    ['a 5xx', entry({ res: { statusCode: 503 }, responseTime: 1250 }), 'request errored'],
    [
      'a url that JSON must escape',
      entry({ req: { ...entry().req, url: '/v1/"quoted"\\back\u0001\u2028é?q=ü' } }),
      'request completed',
    ],
    ['a path that matched no route', entry({ route: 'unmatched' }), 'request completed'],
  ])('writes %s byte for byte as the application’s pino logger does', (_name, e, msg) => {
    const [viaPino, own] = bothLines('info', e, msg);
    expect(viaPino).toHaveLength(1);
    expect(own).toEqual(viaPino);
    expect(JSON.parse(own[0])).toMatchObject({ level: 30, msg, req: { id: e.req.id } });
  });

  it('writes nothing when the level is above info', () => {
    const [viaPino, own] = bothLines('warn', entry(), 'request completed');
    expect(viaPino).toEqual([]);
    expect(own).toEqual([]);
  });

  it('leaves the line to pino when it has no destination of its own (development, tracing)', () => {
    const destination = recording();
    const logger = pino({ level: 'info', mixin: () => ({ trace_id: 'abc' }) }, destination);
    requestLogWriter(logger)(entry(), 'request completed');
    expect(destination.lines).toHaveLength(1);
    expect(JSON.parse(destination.lines[0])).toMatchObject({
      trace_id: 'abc',
      route: entry().route,
    });
  });
});
