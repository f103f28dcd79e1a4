import type { Response } from 'express';
import { once } from 'node:events';
import { Readable, Writable } from 'node:stream';
import { JsonStreamSender } from './send-json-stream';

/**
 * A response whose client takes each write after `takeMs`, or never (`undefined`): a Writable
 * with a small buffer, so that writes wait on it as a socket's would. It keeps no header store of
 * Node's, so it says its head is sent: the service's header setters then hand each header to its
 * `setHeader`, which records it in `headers`.
 */
function responseTo(
  takeMs: number | undefined,
  method = 'GET',
): Response & { text: () => string; headers: Map<string, unknown> } {
  const taken: Buffer[] = [];
  const headers = new Map<string, unknown>();
  const res = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, callback) {
      if (takeMs === undefined) return;
      setTimeout(() => {
        taken.push(chunk);
        callback();
      }, takeMs);
    },
  });
  return Object.assign(res, {
    req: { method },
    headersSent: true,
    headers,
    setHeader: (name: string, value: unknown) => headers.set(name, value),
    status: () => res,
    text: () => Buffer.concat(taken).toString(),
  }) as unknown as Response & { text: () => string; headers: Map<string, unknown> };
}

/**
 * A JSON array of `chunks` strings, a chunk each, every chunk larger than the response's buffer
 * (as a batch of the list is larger than a socket's): each write waits on the client.
 */
const body = (chunks: number): Readable =>
  Readable.from(
    Array.from({ length: chunks }, (_, i) => `${i === 0 ? '[' : ','}"${'x'.repeat(20)}"`).concat(
      ']',
    ),
  );

const settings = (stallTimeoutMs: number, timeoutMs = 25_000) => ({
  stallTimeoutMs,
  shutdown: { timeoutMs, drainDelayMs: 0 },
});

describe('JsonStreamSender', () => {
  it('cuts a client that takes nothing for the stall limit, once, and destroys the body', async () => {
    const sender = new JsonStreamSender(settings(100));
    const res = responseTo(undefined);
    const stream = body(100);
    const onStall = jest.fn();

    void sender.send(res, () => Promise.resolve(stream), { onError: jest.fn(), onStall });
    await once(res, 'close');

    expect(onStall).toHaveBeenCalledTimes(1);
    // Timers may fire up to a millisecond early by the clock they are measured with.
    expect(onStall.mock.calls[0][0]).toBeGreaterThanOrEqual(99);
    expect(stream.destroyed).toBe(true);
    expect(sender.watches.size).toBe(0);
  });

  it('gives a client that keeps taking the whole body, however much longer than the limit that is', async () => {
    const sender = new JsonStreamSender(settings(100));
    const res = responseTo(20);
    const onStall = jest.fn();

    void sender.send(res, () => Promise.resolve(body(30)), { onError: jest.fn(), onStall });
    await once(res, 'finish');

    expect(onStall).not.toHaveBeenCalled();
    expect(res.headers.get('Content-Type')).toBe('application/json; charset=utf-8');
    expect(JSON.parse(res.text())).toHaveLength(30);
    expect(sender.watches.size).toBe(0);
  });

  it('keeps a client that takes some of each write, never all of it, however long; cuts it once it stops', async () => {
    const sender = new JsonStreamSender(settings(1000));
    // No write is ever taken whole, so no `drain`: only the socket's count of bytes moves.
    const res = responseTo(undefined);
    const socket = { bytesWritten: 0, writableLength: 0 };
    Object.assign(res, { socket });
    const onStall = jest.fn();
    void sender.send(res, () => Promise.resolve(body(100)), { onError: jest.fn(), onStall });

    const takeEveryMs = 50;
    const taking = setInterval(() => (socket.bytesWritten += 1000), takeEveryMs);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    clearInterval(taking);
    const stoppedAt = performance.now();
    expect(onStall).not.toHaveBeenCalled();

    await once(res, 'close');
    // Cut the stall limit after its last take, which came up to one interval before `stoppedAt`
    // (and a timer may fire a few ms early against `performance.now()` on a busy machine).
    expect(performance.now() - stoppedAt).toBeGreaterThanOrEqual(1000 - takeEveryMs - 10);
    expect(onStall).toHaveBeenCalledTimes(1);
    expect(sender.watches.size).toBe(0);
  });

  it('once shutting down, cuts a stalled client at half of what is left of the deadline', async () => {
    const sender = new JsonStreamSender(settings(600_000, 2_000));
    const res = responseTo(undefined);
    const onStall = jest.fn();
    void sender.send(res, () => Promise.resolve(body(100)), { onError: jest.fn(), onStall });
    await new Promise(setImmediate);
    expect(sender.watches.size).toBe(1);

    sender.beforeApplicationShutdown();
    await once(res, 'close');

    expect(onStall).toHaveBeenCalledTimes(1);
    expect(onStall.mock.calls[0][0]).toBeLessThan(600_000);
  });

  it('answers a HEAD its head at once, without asking for the body', async () => {
    const sender = new JsonStreamSender(settings(100));
    const res = responseTo(0, 'HEAD');
    const source = jest.fn(() => Promise.resolve(body(3)));

    await sender.send(res, source, { onError: jest.fn(), onStall: jest.fn() });

    expect(source).not.toHaveBeenCalled();
    expect(res.writableEnded).toBe(true);
    expect(res.headers.get('Content-Type')).toBe('application/json; charset=utf-8');
    expect(res.text()).toBe('');
  });
});
