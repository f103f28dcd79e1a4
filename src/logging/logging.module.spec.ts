import pino, { type DestinationStream } from 'pino';
import { generateApiKey } from '../auth/api-key';
import { loggerOptions } from './logging.module';

/** A destination that keeps what it is given. */
function recording(): DestinationStream & { lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (line: string) => void lines.push(line) };
}

describe('the application logger', () => {
  it('logs an error that quotes a key without the key, in its message, stack and properties', () => {
    const key = generateApiKey();
    const destination = recording();
    const logger = pino(loggerOptions('info'), destination);
    const error = Object.assign(new Error(`invalid input syntax for type bigint: "${key}"`), {
      parameters: [key],
      cause: new Error(`while reading ${encodeURIComponent(`api_key=${key}`)}`),
    });
    logger.error({ err: error, reqId: 'r-1' }, 'unexpected error');
    const [line] = destination.lines;
    expect(line).not.toContain(key.slice(3));
    expect(JSON.parse(line)).toMatchObject({
      reqId: 'r-1',
      err: {
        type: 'Error',
        parameters: ['[REDACTED]'],
        message: expect.stringContaining('[REDACTED]'),
      },
    });
  });
});
