/** Longest a caller waits on a Redis command before it goes on without Redis. */
export const REDIS_COMMAND_TIMEOUT_MS = 500;

/**
 * The reply to a Redis command, or an error once `ms` have passed without one, judged after the
 * event loop has read what has already arrived. After a stall of the loop (a long garbage
 * collection, a throttled CPU) timers run before sockets are read, so a plain timer (ioredis'
 * `commandTimeout` too) would fail a command that Redis answered in time.
 */
export function replyWithin<T>(command: Promise<T>, ms = REDIS_COMMAND_TIMEOUT_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => setImmediate(() => reject(new Error(`no reply from Redis within ${ms} ms`))),
      ms,
    );
    command.then(
      (reply) => {
        clearTimeout(timer);
        resolve(reply);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
