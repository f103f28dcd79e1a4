import { RequestsFirst } from './requests-first';

/** Keeps the event loop busy for `ms` at a time, every `ms` + 5: a loop serving a flood. */
function flood(ms: number): () => void {
  const spin = () => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      // busy
    }
  };
  const timer = setInterval(spin, 5);
  return () => clearInterval(timer);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('RequestsFirst', () => {
  let first: RequestsFirst;
  afterEach(() => first.stop());

  it('gives way while the loop is busy, for at most the longest wait', async () => {
    first = new RequestsFirst({ busyShare: 0.7, sampleMs: 50, longestWaitMs: 600 });
    first.start();
    const stop = flood(40);
    try {
      await sleep(200);
      const started = Date.now();
      await first.room();
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(500);
      expect(waited).toBeLessThan(3000);
    } finally {
      stop();
    }
  });

  it('makes no wait when the loop has room', async () => {
    first = new RequestsFirst({ busyShare: 0.7, sampleMs: 50, longestWaitMs: 10_000 });
    first.start();
    await sleep(200);
    const started = Date.now();
    await first.room();
    expect(Date.now() - started).toBeLessThan(50);
  });

  it('goes on as soon as the loop has room again', async () => {
    first = new RequestsFirst({ busyShare: 0.7, sampleMs: 50, longestWaitMs: 10_000 });
    first.start();
    const stop = flood(40);
    await sleep(200);
    const started = Date.now();
    const room = first.room();
    await sleep(300);
    stop();
    await room;
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(5000);
  });
});
