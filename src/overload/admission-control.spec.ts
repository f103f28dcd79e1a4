import { AdmissionControl } from './admission-control';
import { Gradient2Limit, GRADIENT2_DEFAULTS } from './gradient2-limit';
import { LoopDelay } from './loop-delay';

const limitOf = (min: number, max: number, initial = 20) =>
  new Gradient2Limit({
    ...GRADIENT2_DEFAULTS,
    minLimit: min,
    maxLimit: max,
    initialLimit: initial,
  });

describe('Gradient2Limit', () => {
  it('grows while the latency holds and the limit is used', () => {
    const limit = limitOf(4, 1000);
    for (let i = 0; i < 50; i++) limit.update(10, limit.limit);
    expect(limit.limit).toBeGreaterThan(40);
  });

  it('does not grow while less than half of it is in flight', () => {
    const limit = limitOf(4, 1000);
    for (let i = 0; i < 50; i++) limit.update(10, 5);
    expect(limit.limit).toBe(20);
  });

  it('shrinks towards its floor when the latency climbs past the tolerance', () => {
    const limit = limitOf(4, 1000, 200);
    for (let i = 0; i < 20; i++) limit.update(10, 200);
    const before = limit.limit;
    for (let i = 0; i < 30; i++) limit.update(100, limit.limit);
    expect(limit.limit).toBeLessThan(before / 4);
    expect(limit.limit).toBeGreaterThanOrEqual(4);
  });

  it('stays within its bounds', () => {
    const limit = limitOf(7, 7);
    limit.update(1, 7);
    limit.update(1000, 7);
    expect(limit.limit).toBe(7);
  });
});

/** A loop whose 10-ms timer ticks `lagMs` late, on a clock the test moves. */
function fakeLoop(lagMs: () => number): { delay: LoopDelay; advance: (ms: number) => void } {
  let now = 0;
  let nextTick = 10 + lagMs();
  const delay = new LoopDelay(10, () => now);
  delay.onApplicationShutdown();
  return {
    delay,
    advance(ms) {
      const until = now + ms;
      while (nextTick <= until) {
        now = nextTick;
        delay.tick();
        nextTick = now + 10 + lagMs();
      }
      now = until;
    },
  };
}

describe('LoopDelay', () => {
  it('reads the median lag of the ticks since the last read, one long pause apart', () => {
    const lags = [1, 1, 80, 1, 2, 1, 1];
    const loop = fakeLoop(() => lags.shift() ?? 1);
    loop.advance(200);
    expect(loop.delay.read()).toBe(1);
  });

  it('keeps only the latest ticks while nothing reads, and reads those', () => {
    let late = true;
    const idle = fakeLoop(() => (late ? 50 : 1));
    idle.advance(60 * 60_000);
    late = false;
    // An hour of ticks 50 ms late, unread, then 30 s in time: the reading is of the recent ones.
    idle.advance(30_000);
    expect(idle.delay.read()).toBe(1);
  });

  it('reads a loop that has not come round since as late as it is', () => {
    const stalled = fakeLoop(() => 1_000);
    stalled.advance(300);
    expect(stalled.delay.read()).toBe(290);
  });
});

describe('AdmissionControl', () => {
  /**
   * 50 windows of 60 answers of 20 ms each (over half the limit in flight), on the fake loop,
   * its timer `lagMs(window)` late in each window.
   */
  function limitAfterBusyWindows(lagMs: (window: number) => number): number {
    let window = 0;
    const loop = fakeLoop(() => lagMs(window));
    let now = 0;
    const gradient = limitOf(4, 1000, 100);
    const admission = new AdmissionControl(gradient, loop.delay.read, 10, () => now);
    for (; window < 50; window++) {
      const admitted = Array.from({ length: 60 }, () => admission.tryAcquire('critical') as number);
      now += 100;
      loop.advance(100);
      for (const admittedAt of admitted) admission.release(admittedAt);
    }
    return admission.limit;
  }

  it('shrinks the limit while the event loop runs late, however fast the answers', () => {
    expect(limitAfterBusyWindows(() => 30)).toBeLessThan(70);
  });

  it('keeps the limit while the loop is busy but comes round in time (no queue)', () => {
    // Busy 90 % or more of the time in 1-ms tasks: what an event loop utilisation called
    // saturated, when every request was still read within a millisecond.
    expect(limitAfterBusyWindows(() => 1)).toBeGreaterThanOrEqual(100);
  });

  it('keeps the limit when the loop runs late for moments, under a second each', () => {
    // Late for 0.8 s in every 1.5 s: pauses (a collection, the process off its core), no queue.
    expect(limitAfterBusyWindows((window) => (window % 15 < 8 ? 30 : 1))).toBeGreaterThanOrEqual(
      100,
    );
  });

  it('fills the limit by criticality: all of it, 80 %; no known key, while under half', () => {
    const admission = new AdmissionControl(limitOf(4, 10, 10), () => 0, 10);
    for (let i = 0; i < 4; i++) expect(admission.tryAcquire('default')).toBeDefined();
    expect(admission.admitsSheddable()).toBe(true);
    for (let i = 0; i < 4; i++) expect(admission.tryAcquire('default')).toBeDefined();
    expect(admission.admitsSheddable()).toBe(false);
    expect(admission.tryAcquire('default')).toBeUndefined();
    for (let i = 0; i < 2; i++) expect(admission.tryAcquire('critical')).toBeDefined();
    expect(admission.tryAcquire('critical')).toBeUndefined();
    expect(admission.inFlightCount).toBe(10);
  });

  it('updates the limit once per window of answers, from their average time', () => {
    let now = 0;
    const gradient = limitOf(4, 1000);
    const update = jest.spyOn(gradient, 'update');
    const admission = new AdmissionControl(
      gradient,
      () => 3,
      10,
      () => now,
    );
    for (let i = 0; i < 10; i++) {
      const admittedAt = admission.tryAcquire('critical') as number;
      now += 20;
      admission.release(admittedAt);
    }
    expect(update).toHaveBeenCalledTimes(1);
    expect(update).toHaveBeenCalledWith(20, 1, false);
    expect(admission.inFlightCount).toBe(0);
  });
});
