import { AdmissionControl } from './admission-control';
import { Gradient2Limit, GRADIENT2_DEFAULTS } from './gradient2-limit';

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

describe('AdmissionControl', () => {
  it('shrinks the limit in a window where the event loop was saturated, however fast the answers', () => {
    let now = 0;
    const admission = new AdmissionControl(
      limitOf(4, 1000, 100),
      () => 0.97,
      () => now,
    );
    for (let i = 0; i < 50; i++) {
      const admittedAt = admission.tryAcquire('critical') as number;
      now += 20;
      admission.release(admittedAt);
    }
    expect(admission.limit).toBeLessThan(70);
  });

  it('fills the limit by criticality: all of it, 80 %; no known key, while under half', () => {
    const admission = new AdmissionControl(limitOf(10, 10));
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
      () => 0.5,
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
