/**
 * Polls `probe` until `done` holds for its result, or fails after `timeoutMs` with the last result:
 * for states that change within a bound but not at a known instant (a database going away).
 */
export async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`still not there after ${timeoutMs} ms: ${JSON.stringify(value)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
