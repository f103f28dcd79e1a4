import { spawnSync } from 'node:child_process';
import pino from 'pino';
import { fstatSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchedDestination,
  batchedDestination,
  LOG_BATCH_BYTES,
  LOG_FLUSH_INTERVAL_MS,
  type Writer,
} from './batched-destination';

/** A stand-in for sonic-boom: records what it is handed (as text), and flushes at once. */
function recordingWriter(): { writer: Writer; written: string[] } {
  const written: string[] = [];
  const writer = {
    write: (data: Buffer) => written.push(data.toString('utf8')) > 0,
    flush: (callback: () => void) => callback(),
    flushSync: () => undefined,
    end: () => undefined,
  };
  return { writer, written };
}

const line = (i: number): string => `{"n":${i},"pad":"${'x'.repeat(200)}"}\n`;

describe('BatchedDestination', () => {
  afterEach(() => jest.useRealTimers());

  it('hands lines over in order, one buffer per batch once a batch is full', () => {
    const { writer, written } = recordingWriter();
    const destination = new BatchedDestination(writer);
    const count = Math.ceil((LOG_BATCH_BYTES * 2.5) / line(0).length);
    for (let i = 0; i < count; i++) destination.write(line(i));
    expect(written).toHaveLength(2);
    destination.flushSync();
    expect(written).toHaveLength(3);
    expect(written.join('')).toBe(Array.from({ length: count }, (_, i) => line(i)).join(''));
    destination.end();
  });

  it('encodes every line as UTF-8, one longer than a batch on its own, in order', () => {
    const { writer, written } = recordingWriter();
    const destination = new BatchedDestination(writer);
    const accented = '{"url":"/v1/é€😀"}\n';
    const long = `{"pad":"${'€'.repeat(LOG_BATCH_BYTES)}"}\n`;
    destination.write(line(1));
    destination.write(accented);
    destination.write(long);
    destination.write(line(2));
    destination.flushSync();
    expect(written).toEqual([line(1) + accented, long, line(2)]);
    destination.end();
  });

  it('hands over what waits every interval, when traffic is too low to fill a batch', () => {
    jest.useFakeTimers();
    const { writer, written } = recordingWriter();
    const destination = new BatchedDestination(writer);
    destination.write(line(1));
    expect(written).toEqual([]);
    jest.advanceTimersByTime(LOG_FLUSH_INTERVAL_MS);
    expect(written).toEqual([line(1)]);
    destination.end();
  });

  it('hands over the batch before a flush calls back', () => {
    const { writer, written } = recordingWriter();
    const destination = new BatchedDestination(writer);
    destination.write(line(1));
    destination.write(line(2));
    const flushed = jest.fn(() => expect(written).toEqual([line(1) + line(2)]));
    destination.flush(flushed);
    expect(flushed).toHaveBeenCalledTimes(1);
    destination.end();
  });

  it('calls a flush back only once every line written so far is on the file descriptor', async () => {
    // What flushLogs waits for before the process exits. sonic-boom's own flush, with no
    // minLength, calls back at once, while its thread pool may not have written anything yet.
    const dir = mkdtempSync(join(tmpdir(), 'log-'));
    const fd = openSync(join(dir, 'log'), 'w');
    const destination = batchedDestination(fd);
    try {
      let written = 0;
      for (let batch = 1; batch <= 5; batch++) {
        while (written < batch * LOG_BATCH_BYTES) {
          destination.write(line(batch));
          written += line(batch).length;
        }
        await new Promise<void>((resolve) => destination.flush(() => resolve()));
        expect(fstatSync(fd).size).toBe(written);
      }
    } finally {
      destination.end(); // closes the file descriptor
      rmSync(dir, { recursive: true });
    }
  });

  it('writes every line, in order, of a process that flushes its log and exits', () => {
    // A real process with the service's destination on stdout, exiting as main.ts does (flushLogs,
    // then process.exit()) after 2,000 lines.
    const script = `
      const pino = require('pino');
      const { batchedDestination } = require(${JSON.stringify(join(__dirname, 'batched-destination.ts'))});
      const { flushLogs } = require(${JSON.stringify(join(__dirname, '..', 'logging', 'logging.module.ts'))});
      const log = pino({ base: null, timestamp: false }, batchedDestination());
      for (let i = 0; i < 2000; i++) log.info({ i }, 'line');
      flushLogs(log).then(() => process.exit(0));
    `;
    const child = spawnSync(process.execPath, ['--require', '@swc-node/register', '-e', script], {
      cwd: join(__dirname, '..', '..'),
      encoding: 'utf8',
    });
    expect(child.status).toBe(0);
    const lines = child.stdout.trim().split('\n');
    expect(lines).toHaveLength(2000);
    expect(lines.map((l) => (JSON.parse(l) as { i: number }).i)).toEqual(
      Array.from({ length: 2000 }, (_, i) => i),
    );
  });

  it('fails at start, naming it, when sonic-boom lacks a method it calls', () => {
    const destination = pino.destination;
    const spy = jest.spyOn(pino, 'destination').mockImplementation((options) => {
      const writer = destination(options);
      Object.defineProperty(writer, 'flushSync', { value: undefined });
      writer.end();
      return writer;
    });
    try {
      expect(() => batchedDestination(1)).toThrow(/pino.destination\(\) has no flushSync/);
    } finally {
      spy.mockRestore();
    }
  });
});
