import type { PinoLogger } from 'nestjs-pino';
import { Clock } from '../common/clock';
import { KEY } from './api-key.fixture';
import type { ApiKeysRepository } from './api-keys.repository';
import { LAST_USE_WRITE_INTERVAL_MS, LastUseRecorder } from './last-use-recorder';

/** A clock that stands still until the test moves it. */
class StoppedClock extends Clock {
  at = 1_000_000;

  override now(): number {
    return this.at;
  }
}

function recorder() {
  const store = { touch: jest.fn(() => Promise.resolve()) };
  const clock = new StoppedClock();
  const logger = { warn: jest.fn() } as unknown as PinoLogger;
  return {
    store,
    clock,
    lastUse: new LastUseRecorder(store as unknown as ApiKeysRepository, clock, logger),
  };
}

describe('LastUseRecorder', () => {
  it('writes a key in continuous use once a minute: at its first use, then not before the minute ends', () => {
    const { store, clock, lastUse } = recorder();
    lastUse.used(KEY);
    expect(store.touch).toHaveBeenCalledTimes(1);
    for (let ms = 1_000; ms < LAST_USE_WRITE_INTERVAL_MS; ms += 1_000) {
      clock.at += 1_000;
      lastUse.used(KEY);
    }
    clock.at += 999;
    lastUse.used(KEY);
    expect(store.touch).toHaveBeenCalledTimes(1);

    clock.at += 1;
    lastUse.used(KEY);
    expect(store.touch).toHaveBeenCalledTimes(2);
    expect(store.touch).toHaveBeenLastCalledWith(KEY.keyId);
  });

  it('keeps the minute of a key looked up again (a new object for the same key)', () => {
    const { store, clock, lastUse } = recorder();
    lastUse.used(KEY);
    clock.at += 30_000;
    lastUse.used({ ...KEY });
    expect(store.touch).toHaveBeenCalledTimes(1);
    clock.at += 30_000;
    lastUse.used({ ...KEY });
    expect(store.touch).toHaveBeenCalledTimes(2);
  });

  it('writes each key on its own minute', () => {
    const { store, clock, lastUse } = recorder();
    lastUse.used(KEY);
    clock.at += 10_000;
    lastUse.used({ ...KEY, keyId: '8', familyId: '8' });
    expect(store.touch.mock.calls).toEqual([['7'], ['8']]);
  });
});
