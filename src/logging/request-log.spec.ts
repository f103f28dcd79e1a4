import pino, { type DestinationStream, type LoggerOptions } from 'pino';
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

/** The writer's line on a logger made with `options`. */
function lineWith(options: LoggerOptions, e = entry(), msg = 'request completed'): string[] {
  const destination = recording();
  requestLogWriter(pino(options, destination))(e, msg);
  return destination.lines;
}

describe('requestLogWriter', () => {
  it('writes the line pino writes for the entry, undefined fields left out', () => {
    const e = entry({ keyId: undefined, req: { ...entry().req, remoteAddress: undefined } });
    const viaPino = recording();
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_764_000_000_123);
    try {
      pino({ level: 'info' }, viaPino).info(e, 'request aborted');
      expect(lineWith({ level: 'info' }, e, 'request aborted')).toEqual(viaPino.lines);
    } finally {
      now.mockRestore();
    }
    const parsed = JSON.parse(viaPino.lines[0]) as Record<string, unknown>;
    expect(parsed).toMatchObject({ level: 30, msg: 'request aborted', req: { id: e.req.id } });
    expect(parsed).not.toHaveProperty('keyId');
  });

  it('writes nothing when the level is above info', () => {
    expect(lineWith({ level: 'warn' })).toEqual([]);
  });

  // Whatever the application's logger is given applies to request lines too.
  it.each<[string, LoggerOptions, (line: Record<string, unknown>) => void]>([
    [
      'redact',
      { redact: ['req.remoteAddress', 'keyId'] },
      (line) =>
        expect(line).toMatchObject({ req: { remoteAddress: '[Redacted]' }, keyId: '[Redacted]' }),
    ],
    [
      'serializers',
      { serializers: { req: (req: { id: string }) => ({ id: req.id }) } },
      (line) => expect(line.req).toEqual({ id: entry().req.id }),
    ],
    ['mixin', { mixin: () => ({ trace_id: 'abc' }) }, (line) => expect(line.trace_id).toBe('abc')],
    [
      'base',
      { base: { service: 'orders' } },
      (line) => expect(line).toMatchObject({ service: 'orders' }),
    ],
    [
      'messageKey',
      { messageKey: 'message' },
      (line) => expect(line.message).toBe('request completed'),
    ],
    [
      'formatters.level',
      { formatters: { level: (label: string) => ({ severity: label.toUpperCase() }) } },
      (line) => expect(line.severity).toBe('INFO'),
    ],
    [
      'timestamp',
      { timestamp: pino.stdTimeFunctions.isoTime },
      (line) => expect(line.time).toMatch(/^\d{4}-\d{2}-\d{2}T/),
    ],
    [
      'hooks.logMethod',
      {
        hooks: {
          logMethod(args, method) {
            method.call(this, { hooked: true, ...(args[0] as object) }, args[1] as string);
          },
        },
      },
      (line) => expect(line.hooked).toBe(true),
    ],
  ])('honours the logger’s %s', (_option, options, check) => {
    const lines = lineWith({ level: 'info', ...options });
    expect(lines).toHaveLength(1);
    check(JSON.parse(lines[0]) as Record<string, unknown>);
  });
});
