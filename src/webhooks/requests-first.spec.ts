import { setTimeout as sleep } from 'node:timers/promises';
import { RequestsFirst } from './requests-first';

/** Keeps the event loop busy 45 ms in every 46 or so, as a loop serving a flood, until stopped. */
function flood(): () => void {
  const timer = setInterval(() => {
    const until = Date.now() + 45;
    while (Date.now() < until) {
      // busy
    }
  }, 1);
  return () => clearInterval(timer);
}

/** How long `room()` took, asked once the instance had been sampled for 200 ms. */
async function timeOfRoom(first: RequestsFirst, whileWaiting?: () => Promise<void>) {
  first.start();
  await sleep(200);
  const started = Date.now();
  await Promise.all([first.room(), whileWaiting?.()]);
  return Date.now() - started;
}

/** An instance answering requests all the time, and one answering none. */
let answered = 0;
const serving = () => ++answered;
const notServing = () => 0;
const options = { busyShare: 0.7, sampleMs: 50 };

describe('RequestsFirst', () => {
  let first: RequestsFirst;
  let stopFlood: (() => void) | undefined;
  afterEach(() => {
    stopFlood?.();
    stopFlood = undefined;
    first.stop();
  });

  it('gives way while the loop is busy, for at most the longest wait', async () => {
    first = new RequestsFirst(serving, { ...options, longestWaitMs: 600 });
    stopFlood = flood();
    const waited = await timeOfRoom(first);
    expect(waited).toBeGreaterThanOrEqual(500);
    expect(waited).toBeLessThan(3000);
  });

  it('goes on as soon as the loop has room again', async () => {
    first = new RequestsFirst(serving, { ...options, longestWaitMs: 10_000 });
    stopFlood = flood();
    const waited = await timeOfRoom(first, async () => {
      await sleep(300);
      stopFlood?.();
    });
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(5000);
  });

  it('makes no wait when the loop has room', async () => {
    first = new RequestsFirst(serving, { ...options, longestWaitMs: 10_000 });
    expect(await timeOfRoom(first)).toBeLessThan(50);
  });

  it('makes no wait when the loop is busy but answers no requests', async () => {
    first = new RequestsFirst(notServing, { ...options, longestWaitMs: 10_000 });
    stopFlood = flood();
    expect(await timeOfRoom(first)).toBeLessThan(50);
  });
});
