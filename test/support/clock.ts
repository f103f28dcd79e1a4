import type { INestApplicationContext } from '@nestjs/common';
import { Clock } from '../../src/common/clock';

export interface DrivenClock {
  /** Moves the app's clock on by `ms` at once, as if that time had passed. */
  advance(ms: number): void;
}

/**
 * Takes over the app's `Clock`, both its readings (the wall clock of its rate-limit windows and
 * bans and of its writes of keys' last use; the monotonic one of its key cache's bounds), so that
 * a test moves past a window or a bound instead of waiting it out; everything else (timers, the
 * database) keeps real time. The clock stands still where it is, moved only by `advance`; with
 * `running`, it keeps running with real time, `advance` putting it ahead (for a client that waits
 * in real time for what the app's clock decides).
 */
export function driveClock(
  app: INestApplicationContext,
  { running = false }: { running?: boolean } = {},
): DrivenClock {
  const clock = app.get(Clock);
  const takenAt = clock.now();
  const takenAtMonotonic = clock.monotonic();
  let aheadMs = 0;
  jest.spyOn(clock, 'now').mockImplementation(() => (running ? Date.now() : takenAt) + aheadMs);
  jest
    .spyOn(clock, 'monotonic')
    .mockImplementation(() => (running ? performance.now() : takenAtMonotonic) + aheadMs);
  return {
    advance(ms) {
      aheadMs += ms;
    },
  };
}
