import { Global, Injectable, Module } from '@nestjs/common';

/**
 * The application's time. One instance per application, injected, so that a test drives it past
 * a window or a bound instead of waiting it out.
 */
@Injectable()
export class Clock {
  /**
   * The wall clock (ms since the epoch), for what lasts minutes and is shared with other
   * processes: the rate limits' windows and bans, how often a key's last use is written.
   */
  now(): number {
    return Date.now();
  }

  /**
   * Milliseconds on a clock that never jumps (`performance.now()`), for how long something has
   * lasted within this process: how long a cached key is trusted, and since when the key
   * changes feed has confirmed that it hears every change.
   */
  monotonic(): number {
    return performance.now();
  }
}

/** The application's one `Clock`, for every module (the admin application is given the same). */
@Global()
@Module({ providers: [Clock], exports: [Clock] })
export class ClockModule {}
