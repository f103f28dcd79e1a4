import { ChangesFeedState } from './key-cache-trust';
import { KnownKeyHashes, REFRESH_INTERVAL_MS } from './key-hashes';

/** The key cache's: KEY_CACHE_TTL_MS, 5 s by default. */
const RELOAD_INTERVAL_MS = 5_000;

const hashOf = (n: number): string => n.toString(16).padStart(64, '0');

/** Lets the (fake) clock move on a little. */
const tick = (): void => {
  jest.advanceTimersByTime(10);
};

/** A set over a table the test fills, with loads that stay pending until it settles them. */
/** Whether `promise` has settled once every reaction already queued has run (no timer, no I/O). */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise(setImmediate);
  return settled;
}

/** The answer of `promise`, which must have come without waiting for the feed or a load. */
async function answersAtOnce<T>(promise: Promise<T>): Promise<T> {
  if (!(await isSettled(promise))) throw new Error('the answer waited');
  return promise;
}

function setUp() {
  const table = new Set<string>();
  const loads: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const feed: ChangesFeedState = { epoch: 0, listening: false, confirmedAt: -Infinity };
  const failed = jest.fn();
  let loadCount = 0;
  const hashes = new KnownKeyHashes(
    () => {
      loadCount++;
      const rows = [...table];
      return new Promise<string[]>((resolve, reject) =>
        loads.push({ resolve: () => resolve(rows), reject }),
      );
    },
    feed,
    RELOAD_INTERVAL_MS,
    failed,
    () => performance.now(),
  );
  const settleLoads = async (): Promise<void> => {
    for (const load of loads.splice(0)) load.resolve();
    await new Promise((r) => setImmediate(r));
  };
  const failLoads = (error: Error): void => {
    for (const load of loads.splice(0)) load.reject(error);
  };
  /** The feed as KeyChangesFeed reports it to the authenticator. */
  const listening = (since: number): void => {
    feed.epoch++;
    feed.listening = true;
    feed.confirmedAt = since;
    hashes.feedListening();
  };
  const confirmed = (at: number): void => {
    feed.confirmedAt = at;
    hashes.feedConfirmed();
  };
  const lost = (): void => {
    feed.epoch++;
    feed.listening = false;
    hashes.feedLost();
  };
  return {
    table,
    hashes,
    failed,
    settleLoads,
    failLoads,
    listening,
    confirmed,
    lost,
    loads: () => loadCount,
    pending: () => loads.length,
  };
}

describe('KnownKeyHashes', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('answers at once from memory for a hash it holds, and for one it does not once current', async () => {
    const s = setUp();
    s.table.add(hashOf(1));
    s.listening(performance.now());
    await s.settleLoads();
    const at = performance.now();
    s.confirmed(at);
    await expect(answersAtOnce(s.hashes.contains(hashOf(1), at))).resolves.toBe(true);
    await expect(answersAtOnce(s.hashes.contains(hashOf(2), at))).resolves.toBe(false);
  });

  it('waits for the feed to confirm past the request before saying no: a key issued just before is found', async () => {
    const s = setUp();
    s.listening(performance.now());
    await s.settleLoads();
    tick();
    const at = performance.now();
    const issuedJustBefore = s.hashes.contains(hashOf(7), at);
    const madeUp = s.hashes.contains(hashOf(8), at);
    expect(await isSettled(issuedJustBefore)).toBe(false);
    // Its announcement arrives, then the heartbeat sent after the request comes back.
    s.hashes.announced(hashOf(7));
    s.confirmed(at + 1);
    await expect(issuedJustBefore).resolves.toBe(true);
    await expect(madeUp).resolves.toBe(false);
    // No load was needed: one at the start only.
    expect(s.loads()).toBe(1);
  });

  it('ignores payloads that are no key hash', () => {
    const s = setUp();
    s.hashes.announced('sync');
    s.hashes.announced(hashOf(0xabc).toUpperCase());
    expect(s.hashes.size).toBe(0);
    s.hashes.announced(hashOf(0xabc));
    expect(s.hashes.has(hashOf(0xabc))).toBe(true);
  });

  it('keeps what was announced during a load, which may predate it', async () => {
    const s = setUp();
    s.table.add(hashOf(1));
    void s.hashes.load();
    s.hashes.announced(hashOf(2));
    await s.settleLoads();
    expect(s.hashes.has(hashOf(1))).toBe(true);
    expect(s.hashes.has(hashOf(2))).toBe(true);
  });

  it('loads again when the feed listens again, and is current by the feed only after that load', async () => {
    const s = setUp();
    s.listening(performance.now());
    await s.settleLoads();
    s.lost();
    // Issued while the feed was down: its announcement is lost.
    s.table.add(hashOf(5));
    tick();
    const at = performance.now();
    s.listening(at);
    tick();
    s.confirmed(performance.now());
    const asked = s.hashes.contains(hashOf(5), at);
    expect(await isSettled(asked)).toBe(false);
    await s.settleLoads();
    await expect(asked).resolves.toBe(true);
    expect(s.loads()).toBe(2);
  });

  it('while the feed is down, serves waiting requests by loads, one per interval whatever their number', async () => {
    const s = setUp();
    void s.hashes.load();
    await s.settleLoads();
    tick();
    const asked = Array.from({ length: 1000 }, (_, i) =>
      Promise.resolve(s.hashes.contains(hashOf(100 + i), performance.now())),
    );
    expect(s.pending()).toBe(0);
    // Issued before those requests, never announced (the feed is down).
    s.table.add(hashOf(100));
    jest.advanceTimersByTime(RELOAD_INTERVAL_MS);
    expect(s.pending()).toBe(1);
    await s.settleLoads();
    const answers = await Promise.all(asked);
    expect(answers.filter(Boolean)).toHaveLength(1);
    expect(answers[0]).toBe(true);
    expect(s.loads()).toBe(2);
  });

  it('rejects the waiting requests when a load fails, and loads again when asked later', async () => {
    const s = setUp();
    const asked = s.hashes.contains(hashOf(9), performance.now());
    expect(s.pending()).toBe(1);
    s.failLoads(new Error('connect ECONNREFUSED'));
    await expect(asked).rejects.toThrow('ECONNREFUSED');
    expect(s.failed).toHaveBeenCalledTimes(1);
    s.table.add(hashOf(9));
    const again = s.hashes.contains(hashOf(9), performance.now());
    jest.advanceTimersByTime(RELOAD_INTERVAL_MS);
    await s.settleLoads();
    await expect(again).resolves.toBe(true);
  });

  it('loads everything again every 10 minutes: a key inserted unannounced is known by then, a revoked one dropped', async () => {
    const s = setUp();
    s.table.add(hashOf(1));
    s.listening(performance.now());
    await s.settleLoads();
    s.table.delete(hashOf(1));
    s.table.add(hashOf(2));
    jest.advanceTimersByTime(REFRESH_INTERVAL_MS);
    expect(s.pending()).toBe(1);
    await s.settleLoads();
    expect(s.hashes.has(hashOf(1))).toBe(false);
    expect(s.hashes.has(hashOf(2))).toBe(true);
    s.hashes.stop();
    jest.advanceTimersByTime(REFRESH_INTERVAL_MS);
    expect(s.pending()).toBe(0);
  });
});
